/// A failure a command throws instead of handling: rendered in one place
/// (``SimCLI/main(arguments:console:)``) as `Error: …`, with its exit code.
enum CLIError: Error, Sendable {
  /// Writing a file or standard output failed: exit 74. `hint` says what to do next (how to
  /// resume, for a campaign).
  case io(what: String, reason: String, hint: String?)
  /// A bug in the simulator: exit 70.
  case `internal`(String)

  var code: ExitCode {
    switch self {
    case .io: .ioError
    case .internal: .internalError
    }
  }

  var message: String {
    switch self {
    case .io(let what, let reason, let hint):
      "Error: cannot write \(what): \(reason)." + (hint.map { "\n\($0)" } ?? "") + "\n"
    case .internal(let what):
      "Error: internal error: \(what).\n" + InternalErrorReport.request + "\n"
    }
  }
}

/// What to say when sim-cli itself is at fault, thrown or trapped.
enum InternalErrorReport {
  static let request = "This is a bug in sim-cli, not in the design under test; please report it with the command that caused it."
}
