/// One subcommand: its declared shape and what it does.
struct Command: Sendable {
  var spec: CommandSpec
  var run: @Sendable (ParsedArguments, Console) -> ExitCode

  /// A command whose contract is declared but which is not built yet: its help is shown, and
  /// running it says so and exits 64 rather than pretending.
  static func notBuilt(_ spec: CommandSpec, arrives: String) -> Command {
    Command(spec: spec) { _, console in
      console.err(UsageError.notBuilt(command: spec.name, arrives: arrives).render(command: spec))
      return .usage
    }
  }
}

enum Formats {
  static let textJSON = ["text", "json"]
  static let option = CommandSpec.Option.value("--format", "FORMAT", "Output format; text by default.", choices: textJSON)
}
