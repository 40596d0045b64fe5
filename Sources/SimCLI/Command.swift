/// One subcommand: its declared shape and what it does.
struct Command: Sendable {
  var spec: CommandSpec
  var run: @Sendable (ParsedArguments, Console) -> ExitCode
}

enum Formats {
  static let textJSON = ["text", "json"]
  static let option = CommandSpec.Option.value("--format", "FORMAT", "Output format (default text).", choices: textJSON)
}
