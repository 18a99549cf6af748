// Replay: runs the streaming pipeline over a results file and a judgments
// file (JSON lines) in event-time order, whatever order the files hold
// (dumps of many partitions, concatenated, are fine), and finalizes
// everything at the end (`rankwatch replay`). In that order no event is
// late, so replay gives the figures the daemon reaches on the same events
// in any arrival order within allowed_lateness. Its report (JSON and table)
// is rendered from the finished pipeline by daemon/cli/replay_report.h.
//
// Ownership: RunReplay's result owns the pipeline and the dead-letter sink
// it wrote to. Thread-safety: RunReplay runs on the caller's thread and
// shares nothing; a FileDeadLetterSink is used by one thread at a time.
#ifndef RANKWATCH_DAEMON_STREAM_PIPELINE_REPLAY_H_
#define RANKWATCH_DAEMON_STREAM_PIPELINE_REPLAY_H_

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "config/config.h"
#include "daemon/stream/pipeline/pipeline.h"

namespace rankwatch::stream {

struct ReplayOptions {
  std::string results_path;      // JSON lines; "" for none.
  std::string judgments_path;    // JSON lines; "" for none.
  std::string qrels_path;        // Overrides join.qrels_file when set.
  std::string dead_letter_path;  // Overrides dead_letter.file when set.
  // Called now and then with (bytes read, total bytes), e.g. for a
  // progress bar.
  std::function<void(uint64_t, uint64_t)> progress;
};

class FileDeadLetterSink;

// What a replay leaves: the pipeline after FinishAll(), and the dead-letter
// sink it wrote to (declared first: it must outlive the pipeline).
struct ReplayResult {
  std::unique_ptr<FileDeadLetterSink> dead_letters;
  std::unique_ptr<Pipeline> pipeline;
};

// Replays the files through a Pipeline built from `config`. Every line is
// decoded once to index its event time (rejected lines go to the pipeline
// then, in file order; 32 bytes per event), then events are fed sorted by
// event time, results first on ties, then in file order.
// Errors: unreadable files, a line longer than events.max_event_bytes (the
// daemon rejects such an event as too_large; replay stops at it rather
// than read an unbounded line, so that a pipe or device without line
// breaks cannot grow memory), a bad
// qrels file, an unwritable dead-letter file, a file given that holds no
// event or only rejected ones ("FILE: all N results events rejected (first
// at line L)", with a hint when they are events of the other topic; the
// dead letters are written first). Rejected events are logged as
// "FILE:LINE". File names in messages are
// escaped (Printable, base/strings.h): every error is one line.
StatusOr<ReplayResult> RunReplay(const config::Config& config,
                                 const ReplayOptions& options,
                                 const Clock* clock);

// A dead-letter sink writing one JSON object per rejected event:
// {"topic": ..., "reason": ..., "detail": ..., "partition": P, "offset": O,
// "payload": "<original payload>"}. Lines of a file have no key: the
// event's (always empty in replay) is not written. A write that fails (a
// full disk) is remembered: Close() reports it, so no dead letter is lost
// silently.
class FileDeadLetterSink : public DeadLetterSink {
 public:
  static StatusOr<std::unique_ptr<FileDeadLetterSink>> Open(
      const std::string& path);
  ~FileDeadLetterSink() override;
  void Write(Topic topic, RejectReason reason, std::string_view detail,
             RawEvent event, EventOrigin origin) override;
  // Flushes and closes the file: the first write, flush or close error.
  [[nodiscard]] Status Close();

 private:
  FileDeadLetterSink(std::FILE* file, std::string path)
      : file_(file), path_(std::move(path)) {}
  std::FILE* file_;
  std::string path_;
  int first_errno_ = 0;  // Of the first failed write; 0 if none.
  std::string line_;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_PIPELINE_REPLAY_H_
