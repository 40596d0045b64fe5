import Foundation
import Simulator

/// Where a command writes: results to `out` (stdout), progress, warnings and errors to `err`
/// (stderr). Tests use ``capturing()``; the executable uses ``standard()``.
///
/// Everything written is made safe for a terminal first (``sanitized(_:)``): a scenario's strings
/// or an argument cannot smuggle escape sequences into it.
public struct Console: Sendable {
  /// Writes results (stdout).
  public var out: @Sendable (String) -> Void
  /// Writes progress, warnings and errors (stderr).
  public var err: @Sendable (String) -> Void
  /// Whether stdout is a terminal (decides the default format and colour).
  public var stdoutIsTerminal: Bool
  /// `NO_COLOR` was set.
  public var noColor: Bool
  /// Whether stderr is a terminal, where ``status`` rewrites one line in place.
  public var stderrIsTerminal: Bool = false
  /// Rewrites the one-line status on a terminal's stderr (`\r`, the text, erase to the end of the
  /// line); an empty string erases it. The text is sanitized like everything else; only the
  /// console's own control sequence reaches the terminal. Does nothing where stderr is not a
  /// terminal: progress there is written as whole lines with ``err``.
  public var status: @Sendable (String) -> Void = { _ in }
  /// Write failures of the standard streams (a full disk, a closed device).
  let failures: WriteFailures

  /// A console over two writers; both receive sanitized text.
  public init(
    out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void, stdoutIsTerminal: Bool = false, noColor: Bool = true
  ) {
    self.out = { out(Console.sanitized($0)) }
    self.err = { err(Console.sanitized($0)) }
    self.stdoutIsTerminal = stdoutIsTerminal
    self.noColor = noColor
    self.failures = WriteFailures()
  }

  /// The process's stdout and stderr, written with `write(2)`; a failed write of stdout is
  /// remembered (``stdoutFailure``) and nothing more is written there.
  public static func standard() -> Console {
    let environment = ProcessInfo.processInfo.environment
    var console = Console(
      out: { _ in }, err: { _ in }, stdoutIsTerminal: isatty(STDOUT_FILENO) != 0, noColor: environment["NO_COLOR"].map { !$0.isEmpty } ?? false)
    let failures = console.failures
    let colour = !console.noColor
    let outColour = colour && console.stdoutIsTerminal
    let errColour = colour && isatty(STDERR_FILENO) != 0
    console.out = { text in failures.write(Console.coloured(Console.sanitized(text), outColour), to: STDOUT_FILENO) }
    console.err = { text in failures.write(Console.coloured(Console.sanitized(text), errColour), to: STDERR_FILENO) }
    if isatty(STDERR_FILENO) != 0 {
      console.stderrIsTerminal = true
      console.status = { text in
        failures.write("\r" + Console.sanitized(text.replacingOccurrences(of: "\n", with: " ")) + "\u{1B}[K", to: STDERR_FILENO)
      }
    }
    return console
  }

  /// `text` (already sanitized) with colour for a terminal when `on`: a passed mark green, a
  /// failed one red, `FAIL` and `Error:` at the start of a line bold red. Only on a terminal and
  /// without `NO_COLOR`; files, pipes and tests get the plain text.
  public static func coloured(_ text: String, _ on: Bool) -> String {
    guard on else { return text }
    let red = "\u{1B}[31m"
    let boldRed = "\u{1B}[1;31m"
    let green = "\u{1B}[32m"
    let reset = "\u{1B}[0m"
    var out = ""
    out.reserveCapacity(text.utf8.count + 32)
    for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      if i > 0 { out += "\n" }
      var line = String(line)
      for word in ["FAIL", "Error:"] where line.hasPrefix(word) { line = boldRed + word + reset + line.dropFirst(word.count) }
      line = line.replacingOccurrences(of: "✓", with: green + "✓" + reset).replacingOccurrences(of: "✗", with: red + "✗" + reset)
      out += line
    }
    return out
  }

  /// Why writing stdout failed, if it did (`No space left on device`).
  public var stdoutFailure: String? { failures.reason(for: STDOUT_FILENO) }

  /// A console that keeps what is written, for tests.
  public static func capturing() -> (Console, CapturedOutput) {
    let box = CapturedOutput()
    return (Console(out: { box.append(out: $0) }, err: { box.append(err: $0) }), box)
  }

  /// `text` with every control character but newline and tab (C0, DEL, C1 — the ones that start
  /// terminal escape sequences) shown as `�`, and so every invisible character that reorders or
  /// breaks a line (bidirectional controls, U+2028, U+2029: ``TerminalText``).
  public static func sanitized(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: _isControl) else { return text }
    var out = String.UnicodeScalarView()
    for s in text.unicodeScalars { out.append(_isControl(s) ? "\u{FFFD}" : s) }
    return String(out)
  }

  static func _isControl(_ s: Unicode.Scalar) -> Bool {
    let v = s.value
    return (v < 0x20 && v != 0x0A && v != 0x09) || (v >= 0x7F && v <= 0x9F) || TerminalText.isInvisibleLayout(s)
  }
}

/// Text written to a capturing console.
public final class CapturedOutput: @unchecked Sendable {
  private let lock = NSLock()
  private var _out = ""
  private var _err = ""
  init() {}
  /// Everything written to `out`.
  public var stdout: String { lock.withLock { _out } }
  /// Everything written to `err`.
  public var stderr: String { lock.withLock { _err } }
  func append(out text: String) { lock.withLock { _out += text } }
  func append(err text: String) { lock.withLock { _err += text } }
}

/// Writes to file descriptors with `write(2)`, all of it or until it fails; remembers the first
/// failure per descriptor and writes nothing more there. (SIGPIPE is ignored: a closed pipe is
/// such a failure, `EPIPE`.)
final class WriteFailures: @unchecked Sendable {
  private let lock = NSLock()
  private var failed: [Int32: String] = [:]

  func write(_ text: String, to fd: Int32) {
    lock.withLock {
      guard failed[fd] == nil else { return }
      var bytes = Array(text.utf8)
      var offset = 0
      while offset < bytes.count {
        let n = bytes.withUnsafeMutableBytes { buffer in Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
        if n < 0 {
          if errno == EINTR { continue }
          failed[fd] = String(cString: strerror(errno))
          return
        }
        offset += n
      }
      bytes.removeAll()
    }
  }

  func reason(for fd: Int32) -> String? { lock.withLock { failed[fd] } }
}
