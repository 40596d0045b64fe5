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

/// `RecordState` and `Intent` share their storage between copies (a copy is one reference):
/// they must still behave as values — changing a copy, by any property or through a table
/// slot, leaves every other copy as it was, and equality and hashing read the properties, not
/// the storage's identity.
struct CopyOnWriteTests {
  @Test func aChangedCopyLeavesTheOthersAsTheyWere() {
    let field = FieldValue(value: .string("a"), writer: 1, stamp: .origin)
    let original = RecordState(key: 4, type: 0, creator: 1, creatorDevice: 0, fields: [field, field], stamp: .origin)
    var copy = original
    #expect(copy == original)
    copy.fields[1].value = .string("b")
    copy.changeTag = 7
    copy.versions.note(Stamp(clock: 1, hlcWall: 1, hlcLogical: 0, device: 1))
    #expect(original.fields[1].value == .string("a") && original.changeTag == 0 && original.versions == VersionVector())
    #expect(copy.fields[1].value == .string("b") && copy.changeTag == 7 && copy != original)

    var table = RecordTable()
    table[4] = original
    var held = table[4]!
    table[4]!.deletedBy = 9
    #expect(held.deletedBy == 0 && original.deletedBy == 0 && table[4]!.deletedBy == 9)
    held.key = 5
    #expect(table[4]!.key == 4)

    // Equal by value, not by storage: two records made apart are equal and hash alike.
    let twin = RecordState(key: 4, type: 0, creator: 1, creatorDevice: 0, fields: [field, field], stamp: .origin)
    #expect(twin == original)
    #expect(Set([twin, original]).count == 1)
    var changedBack = copy
    changedBack.fields[1].value = .string("a")
    changedBack.changeTag = 0
    changedBack.versions = VersionVector()
    #expect(changedBack == original)
  }

  /// Code written against the stored properties keeps compiling: each is writable through a
  /// key path, as a stored property is, and a write leaves the other copies alone.
  @Test func thePropertiesAreWritableThroughKeyPaths() {
    let original = RecordState(key: 1, type: 0, creator: 1, creatorDevice: 0, fields: [], stamp: .origin)
    var copy = original
    let fields: WritableKeyPath<RecordState, [FieldValue]> = \.fields
    let tag: WritableKeyPath<RecordState, Int64> = \.changeTag
    let deletedBy: WritableKeyPath<RecordState, IntentID> = \.deletedBy
    copy[keyPath: fields] = [FieldValue(value: .int(3), writer: 1, stamp: .origin)]
    copy[keyPath: tag] = 5
    copy[keyPath: deletedBy] = 2
    #expect(copy.fields.count == 1 && copy.changeTag == 5 && copy.isDeleted)
    #expect(original.fields.isEmpty && original.changeTag == 0 && !original.isDeleted)
  }

  @Test func anIntentCopyIsAValue() {
    let made = Intent(
      id: 1, device: 0, trueTime: .zero, deviceTime: .zero, record: 2, kind: .delete, ordinal: 0, context: CausalContext(), ignored: nil)
    var logged = made
    logged.ordinal = 1
    logged.context.insert(1)
    logged.keptInstead = 3
    #expect(made.ordinal == 0 && made.context.isEmpty && made.keptInstead == nil && made.trigger == 0)
    #expect(logged.ordinal == 1 && logged.context.contains(1) && logged.keptInstead == 3)
    #expect(made != logged)
    var back = logged
    back.ordinal = 0
    back.context = CausalContext()
    back.keptInstead = nil
    #expect(back == made && Set([back, made]).count == 1)
  }
}
