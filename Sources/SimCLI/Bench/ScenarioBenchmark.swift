import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli bench scenario`: whole runs per second of a named scenario on one core — building
/// the world, the timeline, settle, the oracle and the report (the file is parsed and compiled once)
/// — and, timed after them, the same runs of the world alone (no oracle, no report).
enum ScenarioBenchmark {
  struct Result {
    var scenario: String
    var runs: Int
    var runsPerSecond: Double
    var eventsPerRun: Int
    var messagesPerRun: Int
    /// Wall time per simulated message, in nanoseconds.
    var nanosecondsPerMessage: Double
    /// Runs per second of the world alone: built, its timeline run and settled, the trace hash
    /// folded as always, and no oracle, no report (as many runs as above, timed after them).
    var worldOnlyRunsPerSecond: Double
  }

  /// Runs for `seconds`, or exactly `runs` runs (seeds 0..<runs) when given: a fixed amount of
  /// work, for counting instructions (`valgrind --tool=callgrind`) before and after a change.
  static func measure(_ file: ScenarioFile, seconds: Double, runs fixedRuns: Int? = nil) -> Result {
    let plan = ScenarioRunner.prepare(file)
    // Warm-up.
    for s in 0..<20 { _ = ScenarioRunner.run(plan, seed: UInt64(s)) }
    let clock = WallClock()
    var runs = 0
    var events = 0
    var messages = 0
    var checksum = 0
    while fixedRuns.map({ runs < $0 }) ?? (clock.elapsedSeconds < seconds) {
      for _ in 0..<(fixedRuns.map { min(50, $0 - runs) } ?? 50) {
        let r = ScenarioRunner.run(plan, seed: UInt64(runs)).report
        events += r.stats.events
        messages += r.stats.messages
        checksum &+= r.anomalies.count
        runs += 1
      }
    }
    let elapsed = clock.elapsedSeconds
    // The same runs without the judging: what the world itself costs, beside what the oracle and
    // the report add (the targets count both).
    let worldClock = WallClock()
    for seed in 0..<runs { checksum &+= ScenarioRunner._runWorldOnly(plan, seed: UInt64(seed)) }
    let worldElapsed = worldClock.elapsedSeconds
    KernelBenchmark._blackHole(Int64(checksum))
    return Result(
      scenario: file.name, runs: runs, runsPerSecond: Double(runs) / elapsed, eventsPerRun: events / max(runs, 1),
      messagesPerRun: messages / max(runs, 1), nanosecondsPerMessage: elapsed * 1e9 / Double(max(messages, 1)),
      worldOnlyRunsPerSecond: Double(runs) / max(worldElapsed, 1e-9))
  }
}

/// `sim-cli bench fuzz`: seeds per second of the default workload at a fixed size, one job:
/// generation, the run, settle and the oracle (no shrinking: the safe design does not fail).
enum FuzzBenchmark {
  struct Result {
    var seeds: Int
    var seedsPerSecond: Double
    var devices: Int
    var intents: Int
    var eventsPerSeed: Int
  }

  /// Runs for `seconds`, or exactly `seeds` seeds (1...seeds) when given.
  static func measure(devices: Int, intents: Int, seconds: Double, seeds fixedSeeds: Int? = nil) -> Result {
    let shape = WorkloadShape.default(devices: devices, intents: intents)
    let policy = try! PolicySpec.parse("append-only").get()
    for s in 1...20 { _ = Fuzzer.run(seed: UInt64(s), shape: shape, policy: policy) }
    let clock = WallClock()
    var seeds = 0
    var events = 0
    while fixedSeeds.map({ seeds < $0 }) ?? (clock.elapsedSeconds < seconds) {
      for _ in 0..<(fixedSeeds.map { min(20, $0 - seeds) } ?? 20) {
        seeds += 1
        events += Fuzzer.run(seed: UInt64(seeds), shape: shape, policy: policy).report.stats.events
      }
    }
    let elapsed = clock.elapsedSeconds
    return Result(seeds: seeds, seedsPerSecond: Double(seeds) / elapsed, devices: devices, intents: intents, eventsPerSeed: events / max(seeds, 1))
  }
}
