import Scenarios

/// `sim-cli bench app`: seeds per second of `fuzz --app NAME`'s work on one job (the workload
/// for apps, the run with the app on every device, settle and the oracle; no shrinking), and
/// where the time goes: inside the app's own code, or in the simulator around it, per call into
/// the app's delegate; and what the app wrote to its disk.
enum AppBenchmark {
  struct Result {
    var app: String
    var seeds: Int
    var seedsPerSecond: Double
    var eventsPerSeed: Int
    /// Calls into the engine's delegate, and into the app's code in all, per seed.
    var delegateCallsPerSeed: Double
    var appCallsPerSeed: Double
    /// Wall time per delegate call: all of it, the simulator's (everything but the app's own
    /// code), and the app's.
    var nanosecondsPerDelegateCall: Double
    var simulatorNanosecondsPerDelegateCall: Double
    var appNanosecondsPerDelegateCall: Double
    /// The simulator's share of the wall time (0…1).
    var simulatorShare: Double
    /// What the app wrote to its disk per seed: bytes, and writes (rows put or deleted, files
    /// set).
    var bytesWrittenPerSeed: Double
    var writesPerSeed: Double
  }

  /// Runs seeds 1, 2, … of the app's workload for `seconds`, or exactly `seeds` seeds when given.
  static func measure(app: AppUnderTest, seconds: Double, seeds fixedSeeds: Int? = nil) -> Result {
    let shape = WorkloadShape()
    for s in 1...min(5, fixedSeeds ?? 5) { _ = Fuzzer.run(seed: UInt64(s), shape: shape, app: app) }
    let meter = AppCostMeter()
    let clock = WallClock()
    var seeds = 0
    var events = 0
    AppCostMeter.$current.withValue(meter) {
      while fixedSeeds.map({ seeds < $0 }) ?? (clock.elapsedSeconds < seconds) {
        for _ in 0..<(fixedSeeds.map { min(20, $0 - seeds) } ?? 20) {
          seeds += 1
          events += Fuzzer.run(seed: UInt64(seeds), shape: shape, app: app).report.stats.events
        }
      }
    }
    let elapsed = clock.elapsedSeconds
    let n = Double(max(seeds, 1))
    let calls = Double(max(meter.delegateCalls, 1))
    let appSeconds = Double(meter.appNanoseconds) / 1e9
    return Result(
      app: app.name, seeds: seeds, seedsPerSecond: Double(seeds) / elapsed, eventsPerSeed: events / max(seeds, 1),
      delegateCallsPerSeed: Double(meter.delegateCalls) / n, appCallsPerSeed: Double(meter.appCalls) / n,
      nanosecondsPerDelegateCall: elapsed * 1e9 / calls, simulatorNanosecondsPerDelegateCall: max(elapsed - appSeconds, 0) * 1e9 / calls,
      appNanosecondsPerDelegateCall: appSeconds * 1e9 / calls, simulatorShare: elapsed > 0 ? max(elapsed - appSeconds, 0) / elapsed : 0,
      bytesWrittenPerSeed: Double(meter.bytesWritten) / n, writesPerSeed: Double(meter.writes) / n)
  }
}
