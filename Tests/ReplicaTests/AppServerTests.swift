@_spi(Kernel) import Simulator
import Testing

@testable import Replica

/// The server as a user's app's engine meets it: zones it must save before it saves records in
/// them, server-set dates, a save carrying the current change tag after a record was made again,
/// and a batch atomic only when it says so.
@Suite struct AppServerTests {
  let schema = Schema(types: [RecordType(name: "Note", fields: [FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true)])])
  let policy = StandardPolicy(preset: "sync-engine-merge")!

  func save(_ key: RecordKey, _ title: String, by intent: IntentID, creator: IntentID? = nil, baseTag: Int64 = 0, zone: Int32 = 1) -> RecordWrite {
    let record = RecordState(
      key: key, type: 0, creator: creator ?? intent, creatorDevice: 0, fields: [FieldValue(value: .string(title), writer: intent, stamp: .origin)],
      stamp: .origin)
    var write = RecordWrite(record: record, changed: .field(0), isDelete: false, baseTag: baseTag)
    write.zone = zone
    return write
  }

  func push(_ server: inout ServerState, _ writes: [RecordWrite], at t: Double = 0, context: MergeContext? = nil) -> [WriteResult] {
    server.push(writes, from: 0, zone: 0, at: seconds(t), policy: policy, context: context ?? MergeContext(schema: schema)).results
  }

  @Test func aRecordGoesOnlyToAZoneTheDatabaseHas() {
    var server = ServerState(schema: schema)
    server.appZones = [1]
    #expect(push(&server, [save(0, "a", by: 1, zone: 2)]) == [.failed(.zoneNotFound, retryAfter: nil)])
    #expect(server.changeZones([ZoneChange(zone: 2, isDelete: false)], from: 0, at: seconds(1)) == [.done])
    guard case .saved = push(&server, [save(0, "a", by: 1, zone: 2)], at: 2).first else {
      Issue.record("a record in a zone saved first is saved")
      return
    }
    // A zone deletion takes every zone of the database.
    server.deleteZone(.deleted)
    #expect(server.appZones == [])
  }

  @Test func theServerSetsTheDates() {
    var server = ServerState(schema: schema)
    server.appZones = [1]
    guard case .saved(let first) = push(&server, [save(0, "a", by: 1)], at: 3).first,
      case .saved(let second) = push(&server, [save(0, "b", by: 2, creator: 1, baseTag: first.changeTag)], at: 7).first
    else {
      Issue.record("both saves go through")
      return
    }
    #expect(first.stamp.device == Stamp.serverDates)
    #expect(first.stamp.hlcWall == seconds(3).nanoseconds && first.stamp.clock == seconds(3).nanoseconds)
    #expect(second.stamp.hlcWall == seconds(3).nanoseconds && second.stamp.clock == seconds(7).nanoseconds)
  }

  /// After a record was deleted and made again, a save of the earlier one that carries the
  /// current change tag is taken, as CloudKit takes any save with the current tag; one with an
  /// older tag is refused.
  @Test func aSaveWithTheCurrentTagIsTakenAfterARecordWasMadeAgain() {
    var context = MergeContext(schema: schema)
    context.recreatedKeys = [true]
    var server = ServerState(schema: schema)
    server.appZones = [1]
    guard case .saved(let again) = push(&server, [save(0, "new", by: 5)], context: context).first else {
      Issue.record("the record made again is saved")
      return
    }
    guard case .saved(let merged) = push(&server, [save(0, "old", by: 2, creator: 1, baseTag: again.changeTag)], at: 1, context: context).first
    else {
      Issue.record("a save carrying the current tag is taken")
      return
    }
    #expect(merged.creator == 5)
    #expect(push(&server, [save(0, "older", by: 3, creator: 1, baseTag: again.changeTag)], at: 2, context: context) == [.refusedDeleted(merged)])
  }

  @Test func aBatchIsAtomicOnlyWhenItSaysSo() {
    var conditions = ServerConditions()
    conditions.atomic = true
    var server = ServerState(schema: schema, conditions: conditions)
    server.appZones = [1]
    server.addRule(RejectRule(keys: [1], error: .quotaExceeded, retryAfter: nil, until: seconds(100)))
    var a = save(0, "a", by: 1)
    var b = save(1, "b", by: 2)
    a.atomic = false
    b.atomic = false
    let results = push(&server, [a, b])
    guard case .saved = results[0] else {
      Issue.record("a non-atomic batch saves what it can: \(results)")
      return
    }
    a.atomic = true
    b.atomic = true
    var fresh = ServerState(schema: schema, conditions: conditions)
    fresh.appZones = [1]
    fresh.addRule(RejectRule(keys: [1], error: .quotaExceeded, retryAfter: nil, until: seconds(100)))
    #expect(push(&fresh, [a, b]) == [.failed(.batchRequestFailed, retryAfter: nil), .failed(.quotaExceeded, retryAfter: nil)])
  }
}
