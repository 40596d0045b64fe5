@_spi(Kernel) import Simulator
import Testing

@testable import Replica

/// `RecordTable` against a dictionary: lookups, key-ordered iteration, counts and the in-place
/// presence questions agree after random writes and removals.
struct RecordTableTests {
  static func record(_ key: RecordKey, deleted: Bool) -> RecordState {
    var r = RecordState(key: key, type: 0, creator: 1, creatorDevice: 0, fields: [], stamp: .origin)
    if deleted { r.deletedBy = 2 }
    return r
  }

  @Test func agreesWithADictionary() {
    var rng = SimRandom(seed: 3, stream: "record-table-test")
    var table = RecordTable()
    var model: [RecordKey: RecordState] = [:]
    for step in 0..<2_000 {
      let key = RecordKey(rng.int(in: 0..<40))
      switch rng.int(in: 0..<3) {
      case 0:
        table[key] = nil
        model[key] = nil
      default:
        let r = Self.record(key, deleted: rng.int(in: 0..<3) == 0)
        table[key] = r
        model[key] = r
      }
      #expect(table[key] == model[key], "step \(step)")
      #expect(table.contains(key) == (model[key] != nil))
      #expect(table.isLive(key) == (model[key].map { !$0.isDeleted } ?? false))
      #expect(table.isDeleted(key) == (model[key]?.isDeleted ?? false))
    }
    #expect(table.count == model.count)
    #expect(table.keys == model.keys.sorted())
    #expect(table.map(\.key) == model.keys.sorted())
    #expect(table.values == model.keys.sorted().map { model[$0]! })
    #expect(table[-1] == nil && table[10_000] == nil && !table.isLive(-1))
  }

  @Test func equalTablesIgnoreTrailingEmptySlots() {
    var a = RecordTable()
    var b = RecordTable()
    a[2] = Self.record(2, deleted: false)
    b[2] = Self.record(2, deleted: false)
    b[9] = Self.record(9, deleted: false)
    b[9] = nil
    #expect(a == b)
    b[1] = Self.record(1, deleted: true)
    #expect(a != b)
  }
}
