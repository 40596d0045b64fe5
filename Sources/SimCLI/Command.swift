/// One subcommand: its declared shape and what it does.
struct Command: Sendable {
  var spec: CommandSpec
  /// Runs the command; a ``CLIError`` (or any other error) it throws is rendered by
  /// ``SimCLI/main(arguments:console:)``.
  var run: @Sendable (ParsedArguments, Console) throws -> ExitCode
}

enum Formats {
  static let textJSON = ["text", "json"]
  static let option = CommandSpec.Option.value("--format", "FORMAT", "Output format (default text).", choices: textJSON)
}
