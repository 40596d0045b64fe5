import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli bench scale`: one world of many devices and many intents, run and settled, timed,
/// with the peak resident memory, judged by the oracle (causal contexts per device and record,
/// each a prefix and its out-of-order exceptions).
enum ScaleBenchmark {
  struct Result {
    var devices: Int
    var intents: Int
    var records: Int
    var events: Int
    var messages: Int
    /// Record copies the messages carried.
    var recordsMoved: Int
    var simulated: VirtualTime
    var seconds: Double
    var peakBytes: Int
    var converged: Bool
    /// Seconds of the oracle (included in ``seconds``).
    var oracleSeconds: Double
    /// Anomalies by kind, every kind present, in report order.
    var anomalies: AnomalyCounts
  }

  /// `devices` devices on the essay's schema over one simulated hour: first `records` notes,
  /// then title edits and preference changes by random devices (mutable fields), with random
  /// syncs; push off (each change would otherwise notify every device), autosync 1 s.
  /// With `assetSize`, every note also has an asset field (`attachment: asset?`), and every
  /// create and edit writes an asset of that size there: an asset is a name and a size, so the
  /// memory must not grow with it.
  static func run(devices: Int, intents: Int, seed: UInt64 = 1, assetSize: Int64? = nil) -> Result {
    let clock = WallClock()
    let names = (0..<devices).map { "d\($0)" }
    let records = max(1, min(1_000, intents / 100))
    var schema = WorkloadShape.essaySchema
    if assetSize != nil { schema.types[0].fields.append(FieldSpec(name: "attachment", kind: .asset, optional: true, mutable: true)) }
    func values(_ title: String, _ n: Int) -> [FieldWrite] {
      var v = [FieldWrite(field: 0, value: .string(title))]
      if let assetSize { v.append(FieldWrite(field: 2, value: .content(Content(name: "a\(n)", size: assetSize, isAsset: true)))) }
      return v
    }
    var world = SyncWorld(
      {
        let c = WorldConfig(
          deviceNames: names, schema: schema, policy: StandardPolicy(preset: "append-only")!, seed: seed,
          network: NetworkConditions(latency: .uniform(.milliseconds(20), .milliseconds(300))), autosync: .seconds(1), push: nil)
        return c
      }())
    var rng = SimRandom(seed: seed, stream: "scale")
    let hour = SimDuration.hours(1).nanoseconds
    for k in 0..<records {
      let d = Int32(rng.int(in: 0..<devices))
      let at = VirtualTime(nanoseconds: Int64(k) * 1_000_000)  // notes first, a millisecond apart
      world.schedule(.intent(device: d, .create(type: 0, key: RecordKey(k), values: values("t\(k)", k))), at: at)
    }
    world.schedule(.syncAll, at: VirtualTime.zero + .seconds(5))
    for i in records..<intents {
      let d = Int32(rng.int(in: 0..<devices))
      let at = VirtualTime(nanoseconds: 10_000_000_000 + rng.int(in: 0...hour))
      let key = RecordKey(rng.int(in: 0..<records))
      world.schedule(.intent(device: d, .set(key: key, values: values("v\(i)", i))), at: at)
    }
    world.run(until: VirtualTime.zero + .seconds(10) + .hours(1))
    world.settle(maxEvents: 50_000_000)
    let judging = WallClock()
    var oracle = Oracle(world: world, recordNames: (0..<records).map { "n\($0)" })
    let anomalies = oracle.judge()
    let oracleSeconds = judging.elapsedSeconds
    return Result(
      devices: devices, intents: intents, records: records, events: world.eventsProcessed, messages: world.messagesSent,
      recordsMoved: world.recordsSent,
      simulated: world.now, seconds: clock.elapsedSeconds, peakBytes: peakResidentBytes(), converged: oracle.converged,
      oracleSeconds: oracleSeconds, anomalies: AnomalyCounts(anomalies))
  }

  /// VmHWM from /proc/self/status (Linux); 0 where unavailable.
  static func peakResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      let digits = line.filter(\.isNumber)
      return (Int(digits) ?? 0) * 1024
    }
    return 0
  }
}
