/// The exit codes of `cli.md`.
public enum ExitCode: Int32, Sendable {
  /// Ran, and every expectation held.
  case success = 0
  /// Ran, and an expectation failed or a violation was found.
  case failure = 1
  /// Usage error.
  case usage = 64
  /// Bad scenario file.
  case dataError = 65
  /// Internal error: a bug in the simulator (a trap prints a request to report it).
  case internalError = 70
  /// A file or standard output could not be written (a full disk, a closed device): nothing
  /// was judged wrong, but the results did not all reach their destination.
  case ioError = 74
  /// Stopped by Ctrl-C (SIGINT) after finishing cleanly: 128 + 2, as shells report it.
  case interrupted = 130
  /// Stopped by SIGTERM after finishing cleanly: 128 + 15.
  case terminated = 143
}
