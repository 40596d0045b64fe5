/// The stderr progress line of `fuzz`: seeds done, seeds/s, failing seeds, signatures, elapsed
/// time and the ETA. Once a second on a terminal; on anything else (a log file, CI) at most once
/// every ``quietInterval`` seconds, so that a long campaign does not fill the log.
///
/// Wall-clock only: nothing here reaches stdout or a results file.
final class FuzzProgress: @unchecked Sendable {
  /// Seconds between lines when stderr is not a terminal.
  static let quietInterval = 30.0

  private let console: Console
  /// Seeds this run will do, when the plan is finite.
  private let total: UInt64?
  /// Seeds done by the earlier run of a resumed campaign.
  private let previous: Int
  /// The `--time` budget, in seconds.
  private let timeLimit: Double?
  private let interval: Double
  private var done = 0
  private var lastPrint = 0.0

  /// A progress line for `total` seeds (nil: unbounded) after `previous` ones, printed every
  /// `interval` seconds.
  init(console: Console, total: UInt64?, previous: Int, timeLimit: Double?, interval: Double) {
    self.console = console
    self.total = total
    self.previous = previous
    self.timeLimit = timeLimit
    self.interval = interval
  }

  /// One more seed done; prints the line when `interval` has passed since the last one.
  func tick(failing: Int, signatures: Int, elapsed: Double) {
    done += 1
    guard elapsed - lastPrint >= interval else { return }
    lastPrint = elapsed
    let rate = Double(done) / max(elapsed, 1e-9)
    let of = total.map { "/\($0.addingReportingOverflow(UInt64(previous)).partialValue)" } ?? ""
    var line = "fuzz: \(done + previous)\(of) seeds · \(BenchCommand.group(rate)) seeds/s · \(failing) failing"
    line += " · \(signatures) signature\(signatures == 1 ? "" : "s") · \(Int(elapsed))s elapsed"
    if let eta = Self.eta(done: done, total: total, elapsed: elapsed, timeLimit: timeLimit) { line += " · ETA \(Int(eta.rounded()))s" }
    if console.stderrIsTerminal { console.status(line) } else { console.err(line + "\n") }
  }

  /// Erases the in-place line on a terminal before results are printed; the next tick draws it
  /// again.
  func clear() {
    if console.stderrIsTerminal && lastPrint > 0 { console.status("") }
  }

  /// Seconds left: the time left of the `--time` budget, or the seeds left at the rate so far,
  /// whichever ends first; nil when neither bounds the campaign.
  static func eta(done: Int, total: UInt64?, elapsed: Double, timeLimit: Double?) -> Double? {
    var left: Double?
    if let timeLimit { left = max(0, timeLimit - elapsed) }
    if let total, done > 0, elapsed > 0 {
      let bySeeds = max(0, Double(total) - Double(done)) / (Double(done) / elapsed)
      left = min(left ?? bySeeds, bySeeds)
    }
    return left
  }
}
