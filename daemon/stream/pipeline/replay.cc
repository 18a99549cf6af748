#include "daemon/stream/pipeline/replay.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/bounded_read.h"
#include "base/json_writer.h"
#include "base/strings.h"
#include "trec/mapped_file.h"

namespace rankwatch::stream {

namespace {

// What replay feeds: one event of either file, located by its line.
struct IndexedEvent {
  int64_t time_ms;
  uint64_t offset;  // Of its line in its file.
  uint32_t length;
  Topic topic;
  int64_t line_no;
};

// One input file. Index() decodes every line once to learn its event time
// (rejected lines go to the pipeline then, in file order); Feed() decodes
// an indexed line again and hands it over.
class Source {
 public:
  Source(Topic topic, trec::MappedFile file, const config::Config& config,
         const Clock* clock)
      : topic_(topic),
        file_(std::move(file)),
        decoder_(EventDecoder::ForConfig(config, clock)) {}

  uint64_t size() const { return file_.data().size(); }

  // Fails on a line longer than `bounds` allow.
  Status Index(Pipeline* pipeline, std::vector<IndexedEvent>* out,
               const ReadBounds& bounds,
               const std::function<void(uint64_t)>& progress) {
    const std::string_view data = file_.data();
    int64_t line_no = 0;
    for (size_t pos = 0; pos < data.size();) {
      size_t eol = data.find('\n', pos);
      if (eol == std::string_view::npos) eol = data.size();
      const std::string_view line = data.substr(pos, eol - pos);
      const uint64_t offset = pos;
      pos = eol + 1;
      ++line_no;
      if (line.size() > bounds.max_line_bytes) {
        return LineTooLong(file_.path(), static_cast<uint64_t>(line_no),
                           bounds);
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      ++events_;
      int64_t time_ms = 0;
      const DecodeStatus status = Decode(line, &time_ms);
      if (!status.ok()) {
        if (rejected_++ == 0) {
          first_rejected_line_ = line_no;
          other_kind_ = DecodesAsTheOtherKind(line);
        }
        pipeline->OnRejected(topic_, status, RawEvent{line, {}},
                             EventOrigin{0, line_no}, Location(line_no));
      } else if (status.ignored) {
        pipeline->OnIgnored(topic_);
      } else {
        out->push_back({time_ms, offset, static_cast<uint32_t>(line.size()),
                        topic_, line_no});
      }
      if ((line_no & 0x3FFF) == 0 && progress) progress(pos);
    }
    return Status::Ok();
  }

  void Feed(const IndexedEvent& e, Pipeline* pipeline) {
    const std::string_view line = file_.data().substr(e.offset, e.length);
    int64_t time_ms = 0;
    const DecodeStatus status = Decode(line, &time_ms);
    const EventOrigin origin{0, e.line_no};
    if (!status.ok()) {  // Decoding is deterministic: not expected.
      pipeline->OnRejected(topic_, status, RawEvent{line, {}}, origin,
                           Location(e.line_no));
    } else if (topic_ == Topic::kResults) {
      (void)pipeline->OnResults(results_, origin);
    } else {
      (void)pipeline->OnJudgments(judgments_, origin);
    }
  }

  // Strict replay: a file given but holding no event, or only events that
  // were all rejected, is a mistake (a judgments file passed as --results,
  // the wrong dump), not a replay of nothing. Ok otherwise.
  Status CheckUsable() const {
    const std::string name = Printable(file_.path(), std::string_view::npos);
    if (events_ == 0) return Status::InvalidArgument(name + ": no events");
    if (rejected_ < events_) return Status::Ok();
    std::string message = name + ": all " + std::to_string(events_) + " " +
                          std::string(TopicName(topic_)) +
                          " events rejected (first at line " +
                          std::to_string(first_rejected_line_) + ")";
    if (other_kind_) {
      message += topic_ == Topic::kResults
                     ? "; they are judgment events: give them as --judgments"
                     : "; they are results events: give them as --results";
    }
    return Status::InvalidArgument(std::move(message));
  }

 private:
  // "FILE:LINE" for the log of a rejected event, in a reused buffer.
  std::string_view Location(int64_t line_no) {
    location_.assign(Printable(file_.path(), std::string_view::npos));
    location_ += ':';
    location_ += std::to_string(line_no);
    return location_;
  }

  // Whether a rejected line is a valid event of the other topic.
  bool DecodesAsTheOtherKind(std::string_view line) {
    if (topic_ == Topic::kResults) {
      JudgmentEvent judgments;
      return decoder_.DecodeJudgments(line, std::nullopt, &judgments).ok();
    }
    ResultsEvent results;
    return decoder_.DecodeResults(line, std::nullopt, &results).ok();
  }

  DecodeStatus Decode(std::string_view line, int64_t* time_ms) {
    if (topic_ == Topic::kResults) {
      DecodeStatus s = decoder_.DecodeResults(line, std::nullopt, &results_);
      *time_ms = results_.timestamp_ms;
      return s;
    }
    DecodeStatus s = decoder_.DecodeJudgments(line, std::nullopt, &judgments_);
    *time_ms = judgments_.timestamp_ms;
    return s;
  }

  Topic topic_;
  trec::MappedFile file_;
  EventDecoder decoder_;
  ResultsEvent results_;
  JudgmentEvent judgments_;
  int64_t events_ = 0;    // Lines that are not blank.
  int64_t rejected_ = 0;  // Of those, rejected when indexed.
  int64_t first_rejected_line_ = 0;
  bool other_kind_ = false;  // The first rejected line suits the other flag.
  std::string location_;
};

// A line over events.max_event_bytes is one rejected event (too_large), as
// the daemon rejects such a record, and the replay goes on. A line beyond
// this hard bound is not an event stream at all (`replay --results
// /dev/zero`): the replay stops there with an error, so that no input makes
// it grow its memory without end.
constexpr size_t kMaxReplayLineBytes = size_t{64} << 20;

// One bound for every line of a replayed file, regular or not. A pipe or
// device is read no further than that into a line; a mapped file's lines
// are checked as they are indexed, so the same file fails the same way
// however it is given.
ReadBounds EventLineBounds(const config::Config& config) {
  ReadBounds bounds;
  bounds.max_line_bytes = std::max(
      kMaxReplayLineBytes, static_cast<size_t>(config.events.max_event_bytes));
  bounds.line_bound_name =
      "replay's line limit; events.max_event_bytes rejects single events";
  return bounds;
}

StatusOr<std::unique_ptr<Source>> OpenSource(Topic topic,
                                             const std::string& path,
                                             const config::Config& config,
                                             const Clock* clock) {
  if (path.empty()) return std::unique_ptr<Source>();
  StatusOr<trec::MappedFile> file =
      trec::MappedFile::Open(path, EventLineBounds(config));
  if (!file.ok()) return file.status();
  return std::make_unique<Source>(topic, std::move(file).value(), config,
                                  clock);
}

// Event-time order, results first on ties, then file order: the order in
// which nothing is late, so replay is the reference the daemon's arrival
// orders are held to.
bool FeedsBefore(const IndexedEvent& a, const IndexedEvent& b) {
  if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
  return a.topic == Topic::kResults && b.topic == Topic::kJudgments;
}

}  // namespace

StatusOr<ReplayResult> RunReplay(const config::Config& base,
                                 const ReplayOptions& options,
                                 const Clock* clock) {
  config::Config config = base;
  if (!options.qrels_path.empty()) config.join.qrels_file = options.qrels_path;
  const std::string& dead_letter_path = options.dead_letter_path.empty()
                                            ? config.dead_letter.file
                                            : options.dead_letter_path;
  ReplayResult result;
  if (!dead_letter_path.empty()) {
    auto sink = FileDeadLetterSink::Open(dead_letter_path);
    if (!sink.ok()) return sink.status();
    result.dead_letters = std::move(sink).value();
  }
  auto pipeline =
      Pipeline::Create(config, clock, nullptr, result.dead_letters.get());
  if (!pipeline.ok()) return pipeline.status();
  result.pipeline = std::move(pipeline).value();

  auto results =
      OpenSource(Topic::kResults, options.results_path, config, clock);
  if (!results.ok()) return results.status();
  auto judgments =
      OpenSource(Topic::kJudgments, options.judgments_path, config, clock);
  if (!judgments.ok()) return judgments.status();
  Pipeline* fed = result.pipeline.get();
  Source* sources[] = {results->get(), judgments->get()};
  uint64_t total = 0;
  for (Source* s : sources) total += s != nullptr ? s->size() : 0;
  // Indexing reads every byte once and feeding once more: half each.
  uint64_t indexed = 0;
  std::vector<IndexedEvent> events;
  for (Source* s : sources) {
    if (s == nullptr) continue;
    RW_RETURN_IF_ERROR(
        s->Index(fed, &events, EventLineBounds(config), [&](uint64_t pos) {
          if (options.progress) options.progress((indexed + pos) / 2, total);
        }));
    indexed += s->size();
  }
  // Results come first in `events`, each file in its order: stable sorting
  // keeps both tie rules.
  if (!std::is_sorted(events.begin(), events.end(), FeedsBefore)) {
    std::stable_sort(events.begin(), events.end(), FeedsBefore);
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const IndexedEvent& e = events[i];
    sources[e.topic == Topic::kResults ? 0 : 1]->Feed(e, fed);
    if (options.progress && (i & 0x3FFF) == 0) {
      options.progress(total / 2 + total / 2 * i / events.size(), total);
    }
  }
  if (options.progress) options.progress(total, total);
  result.pipeline->FinishAll();
  result.pipeline->LogSuppressedRejections();
  if (result.dead_letters != nullptr) {
    RW_RETURN_IF_ERROR(result.dead_letters->Close());
  }
  for (const Source* s : sources) {
    if (s != nullptr) RW_RETURN_IF_ERROR(s->CheckUsable());
  }
  return result;
}

StatusOr<std::unique_ptr<FileDeadLetterSink>> FileDeadLetterSink::Open(
    const std::string& path) {
  if (path.find('\0') != std::string::npos) {  // fopen would stop at it.
    return Status::IoError("cannot open dead-letter file '" +
                           Printable(path, std::string_view::npos) +
                           "': the name holds a NUL byte");
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return Status::IoError("cannot open dead-letter file '" +
                           Printable(path, std::string_view::npos) +
                           "': " + std::strerror(errno));
  }
  return std::unique_ptr<FileDeadLetterSink>(new FileDeadLetterSink(f, path));
}

FileDeadLetterSink::~FileDeadLetterSink() {
  if (file_ != nullptr) std::fclose(file_);
}

Status FileDeadLetterSink::Close() {
  if (file_ == nullptr) return Status::Ok();
  if (std::fflush(file_) != 0 && first_errno_ == 0) first_errno_ = errno;
  if (std::fclose(file_) != 0 && first_errno_ == 0) first_errno_ = errno;
  file_ = nullptr;
  if (first_errno_ == 0) return Status::Ok();
  return Status::IoError("cannot write the dead-letter file '" +
                         Printable(path_, std::string_view::npos) +
                         "': " + std::strerror(first_errno_) +
                         " (rejected events were lost)");
}

void FileDeadLetterSink::Write(Topic topic, RejectReason reason,
                               std::string_view detail, RawEvent event,
                               EventOrigin origin) {
  line_.assign("{\"topic\":");
  AppendJsonString(&line_, TopicName(topic));
  line_.append(",\"reason\":");
  AppendJsonString(&line_, RejectReasonName(reason));
  line_.append(",\"detail\":");
  AppendJsonString(&line_, detail);
  line_.append(",\"partition\":");
  AppendJsonInt(&line_, origin.partition());
  line_.append(",\"offset\":");
  AppendJsonInt(&line_, origin.offset);
  line_.append(",\"payload\":");
  AppendJsonString(&line_, event.payload);
  line_.append("}\n");
  if (file_ != nullptr &&
      std::fwrite(line_.data(), 1, line_.size(), file_) != line_.size() &&
      first_errno_ == 0) {
    first_errno_ = errno != 0 ? errno : EIO;
  }
}

}  // namespace rankwatch::stream
