@_spi(Kernel) import Simulator
import Testing

@testable import Replica

@Suite struct OutboxTests {
  @Test func saveThenDeleteCollapsesToADelete() {
    var o = Outbox()
    o.save(1, fields: FieldMask(rawValue: 0b01))
    o.delete(1)
    #expect(o.entries.count == 1)
    #expect(o.entries[0].isDelete)
  }

  @Test func deleteThenSaveCollapsesToASave() {
    var o = Outbox()
    o.delete(1)
    o.save(1, fields: FieldMask(rawValue: 0b10))
    #expect(o.entries.map(\.isDelete) == [false])
    #expect(o.entries[0].changed.rawValue == 0b10)
  }

  @Test func savesOfOneRecordMergeTheirFieldsAndAnOldAcknowledgementClearsNothing() {
    var o = Outbox()
    o.save(1, fields: FieldMask(rawValue: 0b01))
    let sent = o.entries[0].generation
    o.save(1, fields: FieldMask(rawValue: 0b10))
    #expect(o.entries[0].changed.rawValue == 0b11)
    let staleCleared = o.remove(1, ifAt: sent)
    #expect(!staleCleared)
    let current = o.entries[0].generation
    let currentCleared = o.remove(1, ifAt: current)
    #expect(currentCleared)
    #expect(o.isEmpty)
  }

  @Test func failedEntriesAreKeptButNotSent() {
    var o = Outbox()
    o.save(1, fields: FieldMask(rawValue: 1))
    o.save(2, fields: FieldMask(rawValue: 1))
    o.markFailed(1)
    #expect(o.sendable(limit: 10).map(\.key) == [2])
    #expect(o.hasSendable)
    o.markFailed(2)
    #expect(!o.hasSendable)
    #expect(o.entries.count == 2)
  }
}

@Suite struct TextValueTests {
  @Test func replaceAndAppendKeepProvenancePerCharacter() {
    var t = TextValue("In teh beginning", by: 1)
    let fixed = t.replace("teh", with: "the", by: 2)
    #expect(fixed)
    t.append(".", by: 3)
    #expect(t.string == "In the beginning.")
    #expect(Set(t.visibleAtomIDs.map(\.intent)) == [1, 2, 3])
    let replaced = t.replace("nowhere", with: "x", by: 4)
    #expect(!replaced)
  }

  @Test func concurrentEditsMergeTheSameWayInEitherOrder() {
    let base = TextValue("In teh beginning", by: 1)
    var a = base
    a.append(" (margin)", by: 2)
    var b = base
    _ = b.replace("teh", with: "the", by: 3)
    let ab = a.merged(with: b)
    let ba = b.merged(with: a)
    #expect(ab == ba)
    #expect(ab.string == "In the beginning (margin)")
    #expect(ab.merged(with: ab) == ab)
    #expect(ab.merged(with: base) == ab)
  }
}

@Suite struct HybridLogicalClockTests {
  @Test func aWriteAfterSeeingAStampFromAFastClockStillStampsLater() {
    var fast = HybridLogicalClock()
    let t = fast.tick(now: 600_000_000_000)  // ten minutes ahead
    var slow = HybridLogicalClock()
    slow.observe(Stamp(clock: 600_000_000_000, hlcWall: t.wall, hlcLogical: t.logical, device: 0))
    let later = slow.tick(now: 5_000_000_000)
    #expect((later.wall, later.logical) > (t.wall, t.logical))
  }

  @Test func ticksNeverGoBackwardsWhenTheClockDoes() {
    var c = HybridLogicalClock()
    let a = c.tick(now: 10)
    let b = c.tick(now: 5)
    #expect((b.wall, b.logical) > (a.wall, a.logical))
  }
}

@Suite struct ServerTests {
  let schema = Schema(types: [RecordType(name: "Note", fields: [FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true)])])

  func record(_ key: RecordKey, by intent: IntentID) -> RecordState {
    let stamp = Stamp(clock: Int64(intent), hlcWall: Int64(intent), hlcLogical: 0, device: 0)
    return RecordState(
      key: key, type: 0, creator: intent, creatorDevice: 0, fields: [FieldValue(value: .string("t"), writer: intent, stamp: stamp)], stamp: stamp)
  }

  @Test func aTokenOlderThanAPurgedDeletionExpires() {
    var server = ServerState(schema: schema)
    let policy = StandardPolicy(preset: "field-lww-hlc")!
    let context = MergeContext(schema: schema)
    _ = server.push(
      [RecordWrite(record: record(1, by: 1), changed: .field(0), isDelete: false, baseTag: 0)], from: 0, at: .zero, policy: policy, context: context)
    guard case .changes(_, let token, _) = server.fetch(token: nil, from: 1, at: .zero, retention: .days(30)) else {
      Issue.record("expected changes")
      return
    }
    var doomed = record(1, by: 2)
    doomed.deletedBy = 2
    _ = server.push(
      [RecordWrite(record: doomed, changed: [], isDelete: true, baseTag: 1)], from: 0, at: VirtualTime.zero + .days(1), policy: policy,
      context: context)
    // Within the retention the tombstone is delivered; after it, the token has expired.
    guard case .changes(let records, _, _) = server.fetch(token: token, from: 1, at: VirtualTime.zero + .days(2), retention: .days(30)) else {
      Issue.record("expected changes")
      return
    }
    #expect(records.map(\.isDeleted) == [true])
    #expect(server.fetch(token: token, from: 1, at: VirtualTime.zero + .days(40), retention: .days(30)) == .tokenExpired)
  }
}
