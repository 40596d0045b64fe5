import Scenarios
@_spi(Kernel) import Simulator

/// The `sim-cli` command-line tool.
public enum SimCLI {
  static let commands: [Command] = [
    RunCommand.command,
    ListCommand.command,
    CheckCommand.command,
    ImportCommand.command,
    PoliciesCommand.command,
    FuzzCommand.command,
    ShrinkCommand.command,
    ReportCommand.command,
    CompareCommand.command,
    ExplainCommand.command,
    BenchCommand.command,
    SelftestCommand.command,
    CompletionCommand.command,
  ]

  static func command(named name: String) -> Command? { commands.first { $0.spec.name == name } }

  /// The apps `--app NAME` can choose from, for the command being run.
  @TaskLocal static var apps: [AppUnderTest] = []

  /// Runs the tool with `arguments` (without the program name) and returns the exit code;
  /// `--app NAME` chooses one of `apps`. `toolName` is what usage lines and the commands the
  /// tool suggests (`reproduce: notes-sim run …`) call it.
  public static func main(arguments: [String], console: Console, apps: [AppUnderTest], toolName: String = "sim-cli") -> ExitCode {
    ToolName.$current.withValue(toolName) {
      $apps.withValue(apps) { main(arguments: arguments, console: console) }
    }
  }

  /// Runs the tool with `arguments` (without the program name) and returns the exit code.
  public static func main(arguments: [String], console: Console) -> ExitCode {
    guard let first = arguments.first else {
      console.err(UsageError.missingCommand.render(command: nil))
      return .usage
    }
    switch first {
    case "--version", "-V", "version":
      console.out("sim-cli \(Version.string)\n")
      return .success
    case "--help", "-h":
      console.out(topLevelHelp())
      return .success
    case "help":
      guard arguments.count > 1 else {
        console.out(topLevelHelp())
        return .success
      }
      guard let command = command(named: arguments[1]) else {
        return unknownCommand(arguments[1], console: console)
      }
      console.out(command.spec.helpText())
      return .success
    default:
      break
    }
    guard let command = command(named: first) else {
      if first.hasPrefix("-") {
        let suggestion = Suggestion.closest(to: first, in: ["--help", "--version"])
        console.err(UsageError.unknownOption(first, suggestion: suggestion).render(command: nil))
        return .usage
      }
      return unknownCommand(first, console: console)
    }
    let rest = Array(arguments.dropFirst())
    let beforeSeparator = rest.prefix { $0 != "--" }
    if beforeSeparator.contains("--help") || beforeSeparator.contains("-h") {
      console.out(command.spec.helpText())
      return .success
    }
    switch ArgumentParser.parse(rest, as: command.spec) {
    case .failure(let error):
      console.err(error.render(command: command.spec))
      return .usage
    case .success(let parsed):
      do {
        return try command.run(parsed, console)
      } catch let exit as CommandExit {
        return exit.code
      } catch let error as CLIError {
        console.err(error.message)
        return error.code
      } catch {
        console.err(CLIError.internal("\(error)").message)
        return .internalError
      }
    }
  }

  static func unknownCommand(_ name: String, console: Console) -> ExitCode {
    let names = commands.map(\.spec.name) + ["help"]
    console.err(UsageError.unknownCommand(name, suggestion: Suggestion.closest(to: name, in: names)).render(command: nil))
    return .usage
  }

  /// The help of the tool: a tool of the user's own names itself, and says which sim-cli it is.
  static func topLevelHelp() -> String {
    let tool = ToolName.current
    let title = tool == "sim-cli" ? "sim-cli \(Version.string)" : "\(tool) (sim-cli \(Version.string), with this tool's apps)"
    var text = """
      A deterministic simulator of devices syncing through a CloudKit-like server. It replays
      scenarios or fuzzes random ones, and reports lost edits, resurrected deletes, dropped
      events, stranded records and divergence.

      Usage: \(ToolName.current) COMMAND [OPTIONS]

      Commands:

      """
    for c in commands where !c.spec.hidden {
      text += CommandSpec.row(c.spec.name, c.spec.summary)
    }
    text += "\nDeveloper commands:\n"
    for c in commands where c.spec.hidden {
      text += CommandSpec.row(c.spec.name, c.spec.summary)
    }
    text += """

      Options:
        -h, --help                Show help (also: \(ToolName.current) COMMAND --help, \(ToolName.current) help COMMAND).
        --version                 Print the version.

      Exit codes: 0 ok · 1 expectation failed or violation found · 64 usage · 65 bad scenario
        · 70 internal error · 74 an output could not be written · 130/143 stopped by Ctrl-C/SIGTERM.
      Environment: CONFLICT_SIM_SCENARIOS (a scenarios folder searched first), NO_COLOR.

      """
    return "\(title) — what will this sync design lose?\n\n" + CommandSpec.naming(text)
  }
}
