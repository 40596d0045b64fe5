import Dispatch
import Foundation

/// Ctrl-C (SIGINT) and SIGTERM as a request to stop: while a watch is on, the signals no longer
/// end the process; they are remembered, for a long-running command to finish cleanly (flush,
/// summarise, say how to continue) and exit with ``exitCode``.
///
/// A second signal while the first is being handled ends the process at once, with the same
/// code, as a user pressing Ctrl-C twice expects.
///
/// The signals are read from a `DispatchSource` on a queue of their own, so no Swift code runs in
/// a signal handler; the crash handlers of ``CrashReport`` are untouched.
final class InterruptWatch: @unchecked Sendable {
  private let lock = NSLock()
  private var _received: Int32?
  private var sources: [any DispatchSourceSignal] = []
  private var stopped = false
  private let queue = DispatchQueue(label: "sim-cli.interrupt")

  /// The signals watched.
  static let signals: [Int32] = [SIGINT, SIGTERM]

  /// Starts watching; ``stop()`` gives the signals back their previous meaning. A signal that
  /// was ignored when the process started (a background job of a script) stays ignored.
  init() {
    for signal in Self.takeSignals() {
      let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
      source.setEventHandler { [weak self] in self?.receive(signal) }
      source.resume()
      sources.append(source)
    }
  }

  /// The first signal received, if any.
  var received: Int32? { lock.withLock { _received } }

  /// Whether a signal was received.
  var isSet: Bool { received != nil }

  /// Records `signal` as if it had been received (what a signal source does).
  func receive(_ signal: Int32) {
    let first = lock.withLock {
      if _received != nil { return false }
      _received = signal
      return true
    }
    if !first { _exit(Self.exitStatus(signal)) }
  }

  /// Waits until a signal has been received or `seconds` have passed (tests send themselves one).
  func waitForSignal(seconds: Double) {
    let clock = WallClock()
    while !isSet && clock.elapsedSeconds < seconds { usleep(1_000) }
  }

  /// Stops watching; once is enough, more calls do nothing.
  func stop() {
    let wasWatching = lock.withLock {
      defer { stopped = true }
      return !stopped
    }
    guard wasWatching else { return }
    for source in sources { source.cancel() }
    Self.giveSignalsBack()
  }

  /// The exit code for a stop by `signal`: 128 + the signal's number, as shells report it.
  static func exitStatus(_ signal: Int32) -> Int32 { 128 + signal }

  /// `SIGINT` / `SIGTERM`.
  static func name(_ signal: Int32) -> String {
    switch signal {
    case SIGINT: "SIGINT"
    case SIGTERM: "SIGTERM"
    default: "signal \(signal)"
    }
  }

  /// The exit code a command returns after a stop by `signal` (130 for SIGINT, 143 for SIGTERM).
  static func exitCode(_ signal: Int32) -> ExitCode { signal == SIGTERM ? .terminated : .interrupted }

  // Watches may overlap (tests run commands side by side in one process): the first to start
  // takes the signals, the last to stop gives them back their previous handling. On Linux,
  // libdispatch installs its own handler for a signal source, so the handling is only read,
  // never set to "ignore" (which a child process started meanwhile would inherit); a kqueue
  // source (Darwin) sees a signal only once it is ignored.
  /// A `signal(2)` disposition (a handler, `SIG_IGN` or `SIG_DFL`).
  private typealias SignalHandler = @convention(c) (Int32) -> Void
  nonisolated(unsafe) private static var watchers = 0
  nonisolated(unsafe) private static var previous: [(signal: Int32, handler: SignalHandler?)] = []
  private static let watchersLock = NSLock()

  /// Takes the signals that were not ignored before, and returns them.
  private static func takeSignals() -> [Int32] {
    watchersLock.withLock {
      if watchers == 0 {
        previous = signals.map { s in
          let handler = currentHandler(s)
          #if canImport(Darwin)
            if !isIgnore(handler) { signal(s, SIG_IGN) }
          #endif
          return (s, handler)
        }
      }
      watchers += 1
      return previous.filter { !isIgnore($0.handler) }.map(\.signal)
    }
  }

  private static func giveSignalsBack() {
    watchersLock.withLock {
      watchers -= 1
      if watchers == 0 { for (s, handler) in previous { signal(s, handler) } }
    }
  }

  /// How `signal` is handled now, read without changing it where the C library allows.
  private static func currentHandler(_ signal: Int32) -> SignalHandler? {
    #if canImport(Glibc)
      var action = sigaction()
      sigaction(signal, nil, &action)
      return action.__sigaction_handler.sa_handler
    #else
      let handler = Foundation.signal(signal, SIG_IGN)
      Foundation.signal(signal, handler)
      return handler
    #endif
  }

  private static func isIgnore(_ handler: SignalHandler?) -> Bool {
    handler.map { unsafeBitCast($0, to: Int.self) } == unsafeBitCast(SIG_IGN, to: Int.self)
  }
}
