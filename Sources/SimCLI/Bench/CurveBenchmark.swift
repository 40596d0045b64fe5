import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `sim-cli bench curve`: how the cost of a judged run grows with the work. The scale workload
/// (``ScaleBenchmark``, oracle on) at growing device counts with the intents fixed, then at
/// growing intent counts with the devices fixed; per row the wall time per simulated event and
/// per intent, and the peak resident memory of the row.
enum CurveBenchmark {
  struct Row {
    var devices: Int
    var intents: Int
    var runs: Int
    var eventsPerRun: Int
    var recordsMovedPerRun: Int
    var secondsPerRun: Double
    var peakBytes: Int
    var converged: Bool
    var nanosecondsPerEvent: Double { secondsPerRun * 1e9 / Double(max(eventsPerRun, 1)) }
    var microsecondsPerIntent: Double { secondsPerRun * 1e6 / Double(max(intents, 1)) }
    /// Wall time per record copy carried by a message: each device must receive each change,
    /// so this work grows as devices × changes while events grow more slowly.
    var nanosecondsPerRecordMoved: Double { secondsPerRun * 1e9 / Double(max(recordsMovedPerRun, 1)) }
  }

  static let deviceCounts = [2, 5, 20, 100, 1_000]
  static let intentCounts = [50, 500, 5_000, 50_000]
  /// Intents while the devices grow, and devices while the intents grow.
  static let fixedIntents = 5_000
  static let fixedDevices = 20

  /// The rows in order: devices growing, then intents growing. `progress` is told each row
  /// before it runs.
  static func measure(minimumSeconds: Double, progress: (Int, Int) -> Void) -> [Row] {
    var rows: [Row] = []
    for d in deviceCounts { rows.append(row(devices: d, intents: fixedIntents, minimumSeconds: minimumSeconds, progress)) }
    for i in intentCounts { rows.append(row(devices: fixedDevices, intents: i, minimumSeconds: minimumSeconds, progress)) }
    return rows
  }

  /// Repeats the run (seeds 1, 2, …) until `minimumSeconds` have passed, at least once; the
  /// peak memory is that of the row alone (the high-water mark is reset before it, on Linux).
  static func row(devices: Int, intents: Int, minimumSeconds: Double, _ progress: (Int, Int) -> Void) -> Row {
    progress(devices, intents)
    resetPeakResident()
    var runs = 0
    var events = 0
    var moved = 0
    var seconds = 0.0
    var converged = true
    repeat {
      runs += 1
      let r = ScaleBenchmark.run(devices: devices, intents: intents, seed: UInt64(runs))
      events += r.events
      moved += r.recordsMoved
      seconds += r.seconds
      converged = converged && r.converged
    } while seconds < minimumSeconds
    return Row(
      devices: devices, intents: intents, runs: runs, eventsPerRun: events / runs, recordsMovedPerRun: moved / runs,
      secondsPerRun: seconds / Double(runs),
      peakBytes: ScaleBenchmark.peakResidentBytes(), converged: converged)
  }

  /// Resets the process's peak resident size (VmHWM) to its current size; does nothing where
  /// `/proc/self/clear_refs` is missing.
  static func resetPeakResident() {
    #if canImport(Glibc)
      // Give back what earlier rows freed (glibc's malloc_trim, looked up: Swift's Glibc module
      // does not declare it), so that it does not count in this row's peak.
      if let symbol = dlsym(nil, "malloc_trim") {
        typealias Trim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
      }
    #endif
    guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
    try? handle.write(contentsOf: Data("5".utf8))
    try? handle.close()
  }
}
