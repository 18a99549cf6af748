#include "daemon/cli/command_util.h"

#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

#include "base/strings.h"
#include "config/text.h"
#include "trec/qrels.h"

namespace rankwatch::cli {

int Fail(std::string_view command, std::string_view message, ExitCode code) {
  // Every error is one line, whatever input it echoes: control characters
  // (a NUL, a line break from a library's message) are escaped here, the
  // one place every command's error goes through.
  const std::string line = Printable(message, std::string_view::npos);
  std::fprintf(stderr, "rankwatch%s%.*s: %s\n", command.empty() ? "" : " ",
               static_cast<int>(command.size()), command.data(), line.c_str());
  return ToInt(code);
}

int Fail(std::string_view command, const Status& status, ErrorSource source) {
  return Fail(command, status.message(), ExitCodeFor(status.code(), source));
}

namespace {

// The subcommand CLI11 was parsing when it failed: the last one it entered,
// or the root when none.
CLI::App* FailedCommand(CLI::App& app) {
  CLI::App* command = &app;
  while (!command->get_subcommands().empty()) {
    command = command->get_subcommands().back();
  }
  return command;
}

// "rankwatch eval" for a subcommand, "rankwatch" for the root.
std::string CommandLine(const CLI::App& app, const CLI::App& command) {
  return &command == &app ? "rankwatch" : "rankwatch " + command.get_name();
}

// Where to look next: the positional arguments in a usage line for a
// command that takes some ("usage: rankwatch compare [OPTIONS] QRELS
// RUN..."), else its --help.
std::string UsageHint(const CLI::App& app, const CLI::App& command) {
  std::string positionals;
  for (const CLI::Option* option : command.get_options(
           [](const CLI::Option* o) { return o->get_positional(); })) {
    positionals += " " + option->get_name(true);
    if (option->get_items_expected_max() > 1) positionals += "...";
  }
  if (positionals.empty()) {
    return "see " + CommandLine(app, command) + " --help";
  }
  return "usage: " + CommandLine(app, command) + " [OPTIONS]" + positionals;
}

// An argument CLI11 could not place, and the command that holds it: an
// unknown option stays with the command that was parsing it (the root for
// one before the subcommand's name), an unknown command with the root.
struct Unplaced {
  const CLI::App* command;
  std::string arg;
};

// Innermost command first.
std::vector<Unplaced> UnplacedArgs(const CLI::App& command) {
  std::vector<Unplaced> out;
  for (const CLI::App* at = &command; at != nullptr; at = at->get_parent()) {
    for (std::string& arg : at->remaining()) {
      out.push_back({at, std::move(arg)});
    }
  }
  return out;
}

// The known name `name` most likely means: the closest by edit distance
// when a typo away, else the one name that starts with `name` or that
// `name` starts with ("evaluate" is four edits from "eval", but plainly
// meant it; "--base" for "--baseline").
std::optional<std::string_view> Suggest(
    std::string_view name, std::span<const std::string_view> known) {
  if (std::optional<std::string_view> close = config::ClosestKey(name, known)) {
    return close;
  }
  std::optional<std::string_view> prefixed;
  if (name.size() < 2) return prefixed;
  for (std::string_view k : known) {
    if (k.starts_with(name) || name.starts_with(k)) {
      if (prefixed) return std::nullopt;  // Ambiguous: suggest nothing.
      prefixed = k;
    }
  }
  return prefixed;
}

// "-" alone is stdin, a value; anything else starting with '-' was meant as
// an option.
bool IsOptionLike(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-';
}

// "unknown option '--baselin' (did you mean '--baseline'?)". Only long names
// are suggested: every one-letter flag is one edit from every other, so
// "-x" would "mean" whichever comes first.
std::string UnknownOption(const CLI::App& app, const CLI::App& command,
                          const std::string& arg) {
  std::string_view name = arg;
  name.remove_prefix(name.rfind("--", 0) == 0 ? 2 : 1);
  name = name.substr(0, name.find('='));  // --name=value
  std::vector<std::string> long_names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& l : option->get_lnames()) long_names.push_back(l);
  }
  const std::vector<std::string_view> known(long_names.begin(),
                                            long_names.end());
  std::string message = "unknown option '" + Printable(arg) + "'";
  // "-x" has no long name near it; "-threads" may well mean --threads.
  if (name.size() > 1) {
    if (std::optional<std::string_view> close = Suggest(name, known)) {
      return message + " (did you mean '--" + std::string(*close) + "'?)";
    }
  }
  return message + " (" + UsageHint(app, command) + ")";
}

// The names of the root's subcommands, in the order they were added.
std::vector<std::string> CommandNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands(
           [](const CLI::App* s) { return !s->get_name().empty(); })) {
    names.push_back(sub->get_name());
  }
  return names;
}

// "unknown command 'evaluate' (did you mean 'eval'?)", or the list of
// commands when none is close.
std::string UnknownCommand(CLI::App& app, const std::string& arg) {
  const std::vector<std::string> names = CommandNames(app);
  const std::vector<std::string_view> known(names.begin(), names.end());
  const std::string message = "unknown command '" + Printable(arg) + "'";
  if (std::optional<std::string_view> close = Suggest(arg, known)) {
    return message + " (did you mean '" + std::string(*close) + "'?)";
  }
  return message + " (commands: " +
         config::JoinNames(names, [](const std::string& n) { return n; }) + ")";
}

// What to print for CLI11's `error`: the line, without "rankwatch COMMAND: ",
// and the command it goes under.
struct ParseFailure {
  const CLI::App* command;
  std::string message;
};

ParseFailure DescribeParseError(CLI::App& app, const CLI::App& command,
                                const CLI::ParseError& error) {
  const std::vector<Unplaced> unplaced = UnplacedArgs(command);
  // An unknown option first, whatever CLI11 threw: it is why a required
  // argument seems missing ("eval -x QRELS" took no RUN).
  for (const Unplaced& u : unplaced) {
    if (IsOptionLike(u.arg)) {
      return {u.command, UnknownOption(app, *u.command, u.arg)};
    }
  }
  if (&command == &app) {
    if (!unplaced.empty()) return {&app, UnknownCommand(app, unplaced[0].arg)};
    return {&app,
            "a command is required (commands: " +
                config::JoinNames(CommandNames(app),
                                  [](const std::string& n) { return n; }) +
                ")"};
  }
  // By type: CLI11 names an ExtrasError after the command, not its kind.
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr &&
      !unplaced.empty()) {
    return {unplaced[0].command,
            "unexpected argument '" + Printable(unplaced[0].arg) + "' (" +
                UsageHint(app, *unplaced[0].command) + ")"};
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    return {&command,
            std::string(error.what()) + " (" + UsageHint(app, command) + ")"};
  }
  return {&command, error.what()};
}

}  // namespace

std::optional<int> ParseCommandLine(CLI::App& app, int argc,
                                    const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; CLI11 prints them.
    if (e.get_exit_code() == 0) return app.exit(e);
    const ParseFailure failure =
        DescribeParseError(app, *FailedCommand(app), e);
    return Fail(failure.command == &app ? "" : failure.command->get_name(),
                failure.message, ExitCode::kUsage);
  }
  return std::nullopt;
}

Status WithSwapHint(const Status& error, const std::string& qrels,
                    std::span<const std::string> runs, std::string_view usage) {
  const std::string& m = error.message();
  if (m.find("expected 4 fields") == std::string::npos &&
      m.find("expected 6 fields") == std::string::npos) {
    return error;
  }
  if (qrels == "-" || trec::Qrels::Load(qrels).ok()) return error;
  for (const std::string& run : runs) {
    if (run != "-" && trec::Qrels::Load(run).ok()) {
      return Status(error.code(), m + " (are QRELS and RUN swapped? usage: " +
                                      std::string(usage) + ")");
    }
  }
  return error;
}

Status WriteStdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
      std::fflush(stdout) != 0) {
    return Status::IoError("cannot write the output");
  }
  return Status::Ok();
}

CLI::Validator IntegerAtLeast(int64_t min) {
  const std::string what = "must be an integer >= " + std::to_string(min);
  return CLI::Validator(
      [min, what](std::string& value) {
        int64_t v = 0;
        const char* const end = value.data() + value.size();
        const auto [p, ec] = std::from_chars(value.data(), end, v);
        return ec == std::errc() && p == end && v >= min ? std::string() : what;
      },
      "INT>=" + std::to_string(min));
}

}  // namespace rankwatch::cli
