import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli run FILE|NAME`: one run, the report, exit 0/1.
enum RunCommand {
  static let spec = CommandSpec(
    name: "run", summary: "Run one scenario and print what it lost.",
    discussion: "Exit 0 when every expectation held, 1 when one failed, 65 for a bad scenario file.",
    positionals: [.init(name: "FILE|NAME", help: "A scenario file, or the name of one in scenarios/ (see 'sim-cli list').")],
    options: [
      .value("--seed", "N", "Override the scenario's seed."),
      .value("--policy", "SPEC", "Override the policy, e.g. 'field-lww-hlc delete=tombstone'."),
      ScenarioOptions.appOption,
      .value("--trace", "FILE.jsonl", "Write the trace as JSON Lines."),
      .value("--timeline", "FILE.svg", "Write a timeline picture."),
      .flag("--check-determinism", "With --app: run twice (the second in another process) and report the first step the app did differently."),
      .value("--behaviour-log", "FILE", "With --app: write what the app did after each call into its code (what --check-determinism compares)."),
      Formats.option,
    ],
    examples: [
      "sim-cli run two-device-acceptance", "sim-cli run fat-note-lww --policy crdt --format json", "sim-cli run my.scenario --trace run.jsonl",
      "sim-cli run fat-note-lww --timeline fat-note-lww.svg", "sim-cli run app-edit-under-fetch --app NotesApp --check-determinism",
    ])

  static let command = Command(spec: spec) { args, console in
    let (file, seed, policy): (ScenarioFile, UInt64?, PolicySpec?)
    let app: AppUnderTest?
    do throws(CommandExit) {
      app = try ScenarioOptions.app(args, spec: spec, console: console)
      (file, seed, policy) = try ScenarioOptions.run(args, spec: spec, console: console)
    } catch {
      return error.code
    }
    try ScenarioOptions.checkOutputs(args, ["--trace", "--timeline", "--behaviour-log"], spec: spec, console: console)
    if let refused = ScenarioOptions.refusingSharing(file, app: app, spec: spec, console: console) { return refused }
    if app == nil, let option = ["--check-determinism", "--behaviour-log"].first(where: { args.has($0) || args.value($0) != nil }) {
      console.err(UsageError.other("\(option) checks a user's app: give --app NAME.").render(command: spec))
      return .usage
    }
    if let app, args.has("--check-determinism") { return DeterminismRun.check(file, app: app, seed: seed, args: args, console: console) }
    if let app, let path = args.value("--behaviour-log") {
      let (steps, hash) = ScenarioRunner.behaviour(of: file, app: app, seed: seed)
      do throws(AtomicFile.WriteError) {
        try AtomicFile.write(DeterminismRun.render(steps, hash: hash), to: path)
      } catch {
        throw CLIError.io(what: "'\(error.path)'", reason: error.reason, hint: nil)
      }
      console.err("wrote behaviour log \(path) (\(steps.count) steps)\n")
    }
    let keepEvents = args.value("--trace") != nil || args.value("--timeline") != nil
    let result =
      if let app {
        ScenarioRunner.run(file, app: app, seed: seed, keepEvents: keepEvents)
      } else {
        ScenarioRunner.run(file, seed: seed, policy: policy, keepEvents: keepEvents)
      }
    if let path = args.value("--trace") {
      do throws(AtomicFile.WriteError) {
        let lines = TraceExport.jsonLines(result)
        try AtomicFile.write(lines, to: path)
        console.err("wrote trace \(path) (\(lines.utf8.count { $0 == 10 }) lines)\n")
      } catch {
        throw CLIError.io(what: "'\(error.path)'", reason: error.reason, hint: nil)
      }
    }
    if let path = args.value("--timeline") {
      do throws(AtomicFile.WriteError) {
        try AtomicFile.write(TimelineSVG.render(result), to: path)
        console.err("wrote timeline \(path)\n")
      } catch {
        throw CLIError.io(what: "'\(error.path)'", reason: error.reason, hint: nil)
      }
    }
    if args.value("--format") == "json" {
      console.out(result.report.json.serialized() + "\n")
    } else {
      console.out(result.report.text)
    }
    return result.report.passed ? .success : .failure
  }
}

/// `text` ending in a full stop, unless it ends in its own punctuation (`…did you mean 'x'?`).
func sentence(_ text: String) -> String {
  text.last.map { ".?!".contains($0) } == true ? text : text + "."
}

/// A command stopped early; the message was already printed.
struct CommandExit: Error {
  var code: ExitCode
}

/// Shared option handling for commands that run scenarios. Each prints its own error.
enum ScenarioOptions {
  /// Each of `options` that was given names a file that can be written, or a usage error says
  /// why not — before anything runs.
  /// None names a file another of them names, an input of the command (its positional
  /// arguments: `run x.scenario --trace x.scenario` replaced the scenario), or a file a fuzz
  /// campaign is writing (it holds the file's lock).
  static func checkOutputs(_ args: ParsedArguments, _ options: [String], spec: CommandSpec, console: Console) throws(CommandExit) {
    func refuse(_ option: String, _ path: String, _ reason: String) throws(CommandExit) {
      console.err(UsageError.invalidValue(option: option, value: path, reason: reason, suggestion: nil).render(command: spec))
      throw CommandExit(code: .usage)
    }
    var seen: [(option: String, file: FileIdentity)] = []
    let inputs = args.positionals.compactMap(FileIdentity.init(path:))
    for option in options {
      guard let path = args.value(option) else { continue }
      if let problem = AtomicFile.problem(writing: path) { try refuse(option, path, "cannot write there: \(problem)") }
      if isNamedPipe(path) {
        // Opening a named pipe for writing waits for a reader, perhaps for ever; the process's
        // own streams (`/dev/stdout` on a pipe) are written through their descriptor instead.
        try refuse(option, path, "it is a named pipe; write to a file, or to /dev/stdout and pipe that")
      }
      guard let file = FileIdentity(path: path) else { continue }
      if let other = seen.first(where: { $0.file == file }) {
        try refuse(option, path, "\(other.option) writes that file too; give each output its own file")
      }
      if inputs.contains(file) { try refuse(option, path, "that is an input of this command; writing there would replace it") }
      if file.isLockedByAnotherWriter { try refuse(option, path, "a fuzz campaign is writing that file (it holds its lock)") }
      seen.append((option, file))
    }
  }

  /// `--seed N`, or nil when not given.
  static func seed(_ args: ParsedArguments, spec: CommandSpec, console: Console) throws(CommandExit) -> UInt64? {
    guard args.value("--seed") != nil else { return nil }
    return try IntegerOption.require(args, "--seed", default: 0, in: 0...UInt64.max, spec: spec, console: console)
  }

  /// A usage error when `file` shares and `app` does not (``AppUnderTest/sharesRecords``): an
  /// app with no engine for the shared database never fetches what is shared with its user, so
  /// its run would say nothing true of sharing (nil: go on).
  static func refusingSharing(_ file: ScenarioFile, app: AppUnderTest?, spec: CommandSpec, console: Console) -> ExitCode? {
    guard let app, let share = file.shareNames.first else { return nil }
    guard !app.sharesRecords else { return nil }
    console.err(
      UsageError.other(
        "\(file.name) shares (share \(share)), and \(app.name) does not say it shares: an app that shares makes a second SyncEngine for the device's shared database and sets SimApp.sharesRecords (as SharingNotesApp does); run this scenario with such an app, or with the built-in engine (no --app)"
      ).render(command: spec))
    return .usage
  }

  /// The option every command that runs scenarios takes to run a user's app instead of a policy.
  static let appOption = CommandSpec.Option.value(
    "--app", "NAME", "Run this app (one this tool was built with) on every device instead of a policy's engine.")

  /// `--app NAME`: one of the apps this tool was built with (`SimCLI.runAsProcess(arguments:apps:)`),
  /// or nil when not given. A name it was not built with, or `--app` with `--policy`, is a usage
  /// error.
  static func app(_ args: ParsedArguments, spec: CommandSpec, console: Console) throws(CommandExit) -> AppUnderTest? {
    guard let name = args.value("--app") else { return nil }
    if args.value("--policy") != nil {
      console.err(
        UsageError.other("--app and --policy cannot be used together: an app is judged as \(AppUnderTest.judgedAs)'s server and oracle.")
          .render(command: spec))
      throw CommandExit(code: .usage)
    }
    let apps = SimCLI.apps
    if let app = apps.first(where: { $0.name == name }) { return app }
    let reason =
      apps.isEmpty
      ? "this tool was built without apps; build your own with SimCLI.runAsProcess(arguments:apps:) (docs/your-engine.md)"
      : "expected one of: \(apps.map(\.name).joined(separator: ", "))"
    console.err(
      UsageError.invalidValue(option: "--app", value: name, reason: reason, suggestion: Suggestion.closest(to: name, in: apps.map(\.name)))
        .render(command: spec))
    throw CommandExit(code: .usage)
  }

  /// `--policy SPEC`, or nil when not given.
  static func policy(_ args: ParsedArguments, spec: CommandSpec, console: Console) throws(CommandExit) -> PolicySpec? {
    guard let text = args.value("--policy") else { return nil }
    switch PolicySpec.parse(text) {
    case .success(let p): return p
    case .failure(let e):
      console.err(UsageError.invalidValue(option: "--policy", value: text, reason: e.message, suggestion: nil).render(command: spec))
      throw CommandExit(code: .usage)
    }
  }

  /// The scenario named by the first argument, with `--seed` and `--policy`.
  static func run(_ args: ParsedArguments, spec: CommandSpec, console: Console) throws(CommandExit) -> (ScenarioFile, UInt64?, PolicySpec?) {
    let seed = try ScenarioOptions.seed(args, spec: spec, console: console)
    let policy = try ScenarioOptions.policy(args, spec: spec, console: console)
    return (try load(args.positionals[0], console: console), seed, policy)
  }

  /// A scenario that shapes fuzz workloads: its devices and types. One without types cannot make
  /// records: a clear error, exit 65.
  static func workloadBase(_ nameOrPath: String, console: Console) throws(CommandExit) -> ScenarioFile {
    let file = try load(nameOrPath, console: console)
    guard !file.schema.types.isEmpty else {
      console.err("Error: '\(nameOrPath)' declares no record types; a fuzz workload makes records of the scenario's types. Add a 'type' line.\n")
      throw CommandExit(code: .dataError)
    }
    return file
  }

  /// Loads a scenario, printing diagnostics (exit 65) or a not-found error (exit 64).
  static func load(_ nameOrPath: String, console: Console) throws(CommandExit) -> ScenarioFile {
    do {
      return try ScenarioLocator.load(nameOrPath)
    } catch {
      throw CommandExit(code: report(error, console: console))
    }
  }

  /// Prints why a scenario could not be loaded; the exit code: 65 for a file that does not
  /// parse, 64 for one that cannot be found or read.
  static func report(_ error: Scenario.LoadError, console: Console) -> ExitCode {
    switch error {
    case .invalid(let errors):
      console.err(errors.rendered())
      return .dataError
    case .notFound:
      console.err("Error: \(sentence(error.description))\nSee '\(ToolName.current) list' for the named scenarios.\n")
    case .fileNotFound:
      console.err(
        "Error: \(sentence(error.description))\nA path names a scenario file; a bare name (no .scenario, no /) names one of '\(ToolName.current) list'.\n"
      )
    case .unreadable:
      console.err("Error: \(sentence(error.description))\n")
    }
    return .usage
  }

}

/// Whether `path` is a named pipe of the file system (not one of the process's own streams
/// under /dev or /proc).
func isNamedPipe(_ path: String) -> Bool {
  var info = stat()
  let own = ["/dev/", "/proc/"].contains { URL(fileURLWithPath: path).standardizedFileURL.path.hasPrefix($0) }
  return !own && stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
}

/// A regular file, existing or about to be made, told apart from every other: by device and
/// inode when it exists (links and other spellings of its path included), else by its folder's
/// identity and its name. Devices, pipes and the process's own streams (`/dev/stdout`) are not
/// files an output could clobber: nil.
struct FileIdentity: Equatable {
  let device: UInt64
  let inode: UInt64
  let name: String
  let path: String

  init?(path: String) {
    var info = stat()
    if stat(path, &info) == 0 {
      guard info.st_mode & S_IFMT == S_IFREG else { return nil }
      (device, inode, name, self.path) = (UInt64(info.st_dev), UInt64(info.st_ino), "", path)
      return
    }
    let url = URL(fileURLWithPath: path)
    var folder = stat()
    guard stat(url.deletingLastPathComponent().path, &folder) == 0 else { return nil }
    (device, inode, name, self.path) = (UInt64(folder.st_dev), UInt64(folder.st_ino), url.lastPathComponent, path)
  }

  static func == (a: FileIdentity, b: FileIdentity) -> Bool { a.device == b.device && a.inode == b.inode && a.name == b.name }

  /// Whether another process holds the file's lock (a fuzz campaign writing it).
  var isLockedByAnotherWriter: Bool {
    guard name.isEmpty else { return false }
    let fd = open(path, O_RDONLY | O_NONBLOCK)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
  }
}
