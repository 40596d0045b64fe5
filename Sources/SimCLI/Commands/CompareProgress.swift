import Foundation

/// `compare`'s progress on stderr: `comparing: 37/169 runs of 20 seeds…`.
///
/// On a terminal the line is rewritten in place (at most ten times a second) and erased at the
/// end, so that only the table stays. Elsewhere (a log, a pipe) it is at most three lines, at a
/// quarter, half and three quarters of the way, and only once the comparison has taken two
/// seconds: a quick comparison writes nothing.
final class CompareProgress: @unchecked Sendable {
  enum Style: Equatable, Sendable {
    /// Rewrites one line with `\r` (through ``Console/status``).
    case terminal
    /// Whole lines, a few at most.
    case lines
  }

  let total: Int
  let seedsPerRun: Int
  let style: Style
  let write: @Sendable (String) -> Void
  let elapsed: @Sendable () -> Double
  private let lock = NSLock()
  private var done = 0
  private var lastDrawn = -1.0
  private var drawn = false
  private var quartersShown = 0

  init(total: Int, seedsPerRun: Int, style: Style, write: @escaping @Sendable (String) -> Void, elapsed: @escaping @Sendable () -> Double) {
    self.total = total
    self.seedsPerRun = seedsPerRun
    self.style = style
    self.write = write
    self.elapsed = elapsed
  }

  /// Progress for `console`: in place when its stderr is a terminal, else whole lines.
  static func standard(total: Int, seedsPerRun: Int, console: Console) -> CompareProgress {
    let clock = WallClock()
    if console.stderrIsTerminal {
      let status = console.status
      return CompareProgress(
        total: total, seedsPerRun: seedsPerRun, style: .terminal,
        // The lines come as `\r ESC[K text`; the console's status line does that part itself.
        write: { text in status(text.replacingOccurrences(of: "\r\u{1B}[K", with: "")) }, elapsed: { clock.elapsedSeconds })
    }
    return CompareProgress(total: total, seedsPerRun: seedsPerRun, style: .lines, write: console.err, elapsed: { clock.elapsedSeconds })
  }

  /// The line as it stands: `comparing: 37/169 runs of 20 seeds…`.
  var line: String {
    lock.withLock { Self.line(done: done, total: total, seedsPerRun: seedsPerRun) }
  }

  static func line(done: Int, total: Int, seedsPerRun: Int) -> String {
    "comparing: \(done)/\(total) runs of \(seedsPerRun) seed\(seedsPerRun == 1 ? "" : "s")…"
  }

  /// The comparison starts: on a terminal, the line shows `0/N` at once.
  func start() {
    lock.withLock {
      guard style == .terminal else { return }
      lastDrawn = elapsed()
      drawn = true
      write("\r\u{1B}[K" + Self.line(done: done, total: total, seedsPerRun: seedsPerRun))
    }
  }

  /// One policy × scenario run finished.
  func tick() {
    lock.withLock {
      done += 1
      let now = elapsed()
      switch style {
      case .terminal:
        guard now - lastDrawn >= 0.1 || done == total else { return }
        lastDrawn = now
        drawn = true
        write("\r\u{1B}[K" + Self.line(done: done, total: total, seedsPerRun: seedsPerRun))
      case .lines:
        let quarter = total == 0 ? 0 : min(3, done * 4 / total)
        guard quarter > quartersShown else { return }
        quartersShown = quarter
        guard now >= 2 else { return }
        write("comparing: \(done)/\(total) runs of \(seedsPerRun) seed\(seedsPerRun == 1 ? "" : "s") (\(Int(now))s)\n")
      }
    }
  }

  /// The comparison is over: the in-place line is erased.
  func finish() {
    lock.withLock {
      if style == .terminal && drawn { write("\r\u{1B}[K") }
      drawn = false
    }
  }
}
