import Foundation

/// Where a command writes: results to `out` (stdout), progress, warnings and errors to `err`
/// (stderr). Tests use ``capturing()``; the executable uses ``standard()``.
public struct Console: Sendable {
  /// Writes results (stdout); the text carries its own line endings.
  public var out: @Sendable (String) -> Void
  /// Writes progress, warnings and errors (stderr); the text carries its own line endings.
  public var err: @Sendable (String) -> Void
  /// Whether stdout is a terminal (decides the default format and colour).
  public var stdoutIsTerminal: Bool
  /// `NO_COLOR` was set.
  public var noColor: Bool

  /// A console writing through `out` and `err`; by default not a terminal and without colour,
  /// as tests want.
  public init(
    out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void, stdoutIsTerminal: Bool = false, noColor: Bool = true
  ) {
    self.out = out
    self.err = err
    self.stdoutIsTerminal = stdoutIsTerminal
    self.noColor = noColor
  }

  /// The process's stdout and stderr.
  public static func standard() -> Console {
    let environment = ProcessInfo.processInfo.environment
    return Console(
      out: { text in FileHandle.standardOutput.write(Data(text.utf8)) },
      err: { text in FileHandle.standardError.write(Data(text.utf8)) },
      stdoutIsTerminal: isatty(STDOUT_FILENO) != 0,
      noColor: environment["NO_COLOR"].map { !$0.isEmpty } ?? false)
  }

  /// A console that keeps what is written, for tests.
  public static func capturing() -> (Console, CapturedOutput) {
    let box = CapturedOutput()
    return (Console(out: { box.append(out: $0) }, err: { box.append(err: $0) }), box)
  }
}

/// Text written to a capturing console.
public final class CapturedOutput: @unchecked Sendable {
  private let lock = NSLock()
  private var _out = ""
  private var _err = ""
  /// An empty capture; only a console from ``Console/capturing()`` writes into one.
  init() {}
  /// Everything written to the console's `out` so far.
  public var stdout: String { lock.withLock { _out } }
  /// Everything written to the console's `err` so far.
  public var stderr: String { lock.withLock { _err } }
  func append(out text: String) { lock.withLock { _out += text } }
  func append(err text: String) { lock.withLock { _err += text } }
}
