/// Real elapsed time, for benchmarks and progress lines only. Nothing measured here may reach a
/// simulation, a trace, a report or a hash: simulated time comes from `EventLoop` alone.
struct WallClock {
  private let start = ContinuousClock.now
  /// Seconds since this clock was made.
  var elapsedSeconds: Double {
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
  }
}
