@_spi(Kernel) import Simulator
import Testing

@testable import Replica

/// Warming a batch (reading its cold memory in one pass before working through it) is for speed
/// only: a world of many devices, warmed and not, must send the same messages, end in the same
/// state and leave every device with the same causal contexts.
struct WarmTests {
  /// `bench scale`'s workload in small: notes made first, then title edits by random
  /// devices, syncing every second.
  static func run(devices: Int, warms: Bool?, seed: UInt64) -> (hash: String, contexts: [CausalContext], events: Int) {
    var config = WorldConfig(
      deviceNames: (0..<devices).map { "d\($0)" }, schema: noteSchema, policy: StandardPolicy(preset: "append-only")!, seed: seed,
      network: NetworkConditions(latency: .uniform(.milliseconds(20), .milliseconds(300))), autosync: .seconds(1), push: nil)
    config.warmsBatches = warms
    var world = SyncWorld(config)
    var rng = SimRandom(seed: seed, stream: "warm-test")
    let records = 12
    for k in 0..<records {
      let d = Int32(rng.int(in: 0..<devices))
      world.schedule(
        .intent(device: d, .create(type: note, key: RecordKey(k), values: [FieldWrite(field: titleField, value: .string("t\(k)"))])),
        at: VirtualTime(nanoseconds: Int64(k) * 1_000_000))
    }
    for i in 0..<400 {
      let d = Int32(rng.int(in: 0..<devices))
      let key = RecordKey(rng.int(in: 0..<records))
      let at = VirtualTime(nanoseconds: 2_000_000_000 + rng.int(in: 0...60_000_000_000))
      world.schedule(.intent(device: d, .set(key: key, values: [FieldWrite(field: titleField, value: .string("v\(i)"))])), at: at)
    }
    world.run(until: VirtualTime(nanoseconds: 70_000_000_000))
    world.settle()
    var contexts: [CausalContext] = []
    for d in 0..<devices {
      for k in 0..<records { contexts.append(world.ledgers[d].context(of: RecordKey(k), log: world.log)) }
    }
    return (world.trace.hash, contexts, world.eventsProcessed)
  }

  @Test(arguments: [1, 2] as [UInt64])
  func aWarmedWorldDoesWhatAnUnwarmedOneDoes(seed: UInt64) {
    let warmed = Self.run(devices: batchWarmingDevices + 4, warms: nil, seed: seed)
    let cold = Self.run(devices: batchWarmingDevices + 4, warms: false, seed: seed)
    #expect(warmed.events > 1_000, "the workload is too small to fetch batches")
    #expect(warmed.hash == cold.hash)
    let differing = zip(warmed.contexts, cold.contexts).filter { $0 != $1 }.count
    #expect(warmed.contexts.count == cold.contexts.count && differing == 0, "\(differing) of \(cold.contexts.count) contexts differ")
  }

  @Test func warmingReadsOnlyKeysTheTableHolds() {
    var table = RecordTable()
    let held = RecordState(
      key: 2, type: 0, creator: 1, creatorDevice: 0, fields: [FieldValue(value: .int(1), writer: 1, stamp: .origin)], stamp: .origin)
    table[2] = held
    let strays = [5, 2, -1, 200].map {
      RecordState(key: RecordKey($0), type: 0, creator: 1, creatorDevice: 0, fields: [], stamp: .origin)
    }
    #expect(table.warm(strays) == 0)  // only key 2 is held, and it is live
    var deleted = held
    deleted.deletedBy = 7
    table[2] = deleted
    #expect(table.warm(strays) == 7)
  }
}
