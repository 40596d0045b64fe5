@_spi(Kernel) import Simulator
import Testing

@testable import Replica

/// The server's CloudKit answers, one condition at a time, driven directly.
@Suite struct CloudKitServerTests {
  let schema = Schema(types: [RecordType(name: "Note", fields: [FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true)])])
  let policy = StandardPolicy(preset: "field-lww-hlc")!
  var context: MergeContext { MergeContext(schema: schema) }

  func save(_ key: RecordKey, _ title: String = "t", by intent: IntentID = 1) -> RecordWrite {
    let stamp = Stamp(clock: Int64(intent), hlcWall: Int64(intent), hlcLogical: 0, device: 0)
    let record = RecordState(
      key: key, type: 0, creator: intent, creatorDevice: 0, fields: [FieldValue(value: .string(title), writer: intent, stamp: stamp)], stamp: stamp)
    return RecordWrite(record: record, changed: .field(0), isDelete: false, baseTag: 0)
  }

  func push(_ server: inout ServerState, _ writes: [RecordWrite], from d: Int32 = 0, at t: Double = 0, zone: Int32 = 0) -> [WriteResult] {
    server.push(writes, from: d, zone: zone, at: seconds(t), policy: policy, context: context).results
  }

  @Test func aRecordsSizeIsItsValuesPlusSystemFields() {
    #expect(Value.string("héllo").byteSize == 6)
    #expect(Value.text(TextValue("abc", by: 1)).byteSize == 3)
    #expect(Value.int(7).byteSize == 8)
    #expect(Value.null.byteSize == 0)
    #expect(save(0, "12345").record.byteSize == 105)
    var deleted = save(0).record
    deleted.deletedBy = 2
    #expect(deleted.byteSize == 0)
  }

  @Test func aRequestOverCloudKitsLimitsFailsAsAWholeWithLimitExceeded() {
    var conditions = ServerConditions()
    conditions.maxRecordsPerRequest = 2
    var server = ServerState(schema: schema, conditions: conditions)
    #expect(push(&server, [save(0), save(1), save(2)]) == Array(repeating: .failed(.limitExceeded, retryAfter: nil), count: 3))
    #expect(server.records.count == 0)
    #expect(push(&server, [save(0), save(1)]).allSatisfy { if case .saved = $0 { true } else { false } })
    var bytes = ServerConditions()
    bytes.maxBytesPerRequest = 250  // two records of 101 bytes fit, three do not
    var small = ServerState(schema: schema, conditions: bytes)
    #expect(push(&small, [save(0), save(1), save(2)]).allSatisfy { $0 == .failed(.limitExceeded, retryAfter: nil) })
    #expect(push(&small, [save(0), save(1)]).allSatisfy { !$0.isFailure })
  }

  @Test func aFullStorageRefusesWhatWouldGrowItAndFreeingSpaceLetsItThrough() {
    var conditions = ServerConditions()
    conditions.quota = 1_000
    conditions.usedByOthers = 850  // room for one 101-byte record
    var server = ServerState(schema: schema, conditions: conditions)
    let first = push(&server, [save(0), save(1)])
    #expect(!first[0].isFailure)
    #expect(first[1] == .failed(.quotaExceeded, retryAfter: nil))
    #expect(server.freeBytes == 49)
    server.freeStorage(100)
    #expect(server.freeBytes == 149)
    #expect(!push(&server, [save(1)])[0].isFailure)
    // Freeing more than others use buys storage.
    server.freeStorage(10_000)
    #expect(server.conditions.usedByOthers == 0)
    #expect(server.freeBytes == 10_048)
  }

  @Test func throttlingRefusesUntilTheWindowEndsAndAnEarlyRetryDoublesTheWait() {
    var conditions = ServerConditions()
    conditions.throttle = Throttle(perDevice: RequestBudget(requests: 2, window: .minutes(1)))
    var server = ServerState(schema: schema, conditions: conditions)
    #expect(server.admit(0, at: seconds(0)) == nil)
    #expect(server.admit(0, at: seconds(10)) == nil)
    #expect(server.admit(1, at: seconds(10)) == nil)  // another device has its own budget
    #expect(server.admit(0, at: seconds(20)) == .seconds(40))  // until the window ends at 1m
    // Back too early: refused again, and the wait doubles from the first one.
    #expect(server.admit(0, at: seconds(30)) == .seconds(80))
    #expect(server.admit(0, at: seconds(31)) == .seconds(160))
    // Honouring the last retry-after gets through (a new window).
    #expect(server.admit(0, at: seconds(31 + 160)) == nil)
  }

  @Test func theAppsBudgetIsSharedByEveryDevice() {
    var conditions = ServerConditions()
    conditions.throttle = Throttle(app: RequestBudget(requests: 3, window: .seconds(10)))
    var server = ServerState(schema: schema, conditions: conditions)
    #expect(server.admit(0, at: seconds(1)) == nil)
    #expect(server.admit(1, at: seconds(2)) == nil)
    #expect(server.admit(2, at: seconds(3)) == nil)
    #expect(server.admit(3, at: seconds(4)) == .seconds(6))
    #expect(push(&server, [save(0)], from: 1, at: 5) == [.failed(.requestRateLimited, retryAfter: .seconds(5))])
  }

  @Test func aRejectLineAnswersItsRecordsUntilItEnds() {
    var server = ServerState(schema: schema)
    server.addRule(RejectRule(keys: [1], error: .zoneBusy, retryAfter: .seconds(30), until: seconds(60)))
    let results = push(&server, [save(0), save(1)], at: 1)
    #expect(!results[0].isFailure)
    #expect(results[1] == .failed(.zoneBusy, retryAfter: .seconds(30)))
    #expect(!push(&server, [save(1)], at: 60)[0].isFailure)
  }

  @Test func aLostAnswerIsAppliedButReportedLost() {
    var server = ServerState(schema: schema)
    server.addRule(RejectRule(keys: [0], error: .serverResponseLost, retryAfter: nil, until: seconds(60)))
    let (results, changed, lost) = server.push([save(0)], from: 0, zone: 0, at: seconds(1), policy: policy, context: context)
    #expect(changed)
    #expect(lost == [0])
    #expect(!results[0].isFailure)  // the world replaces it with serverResponseLost on the way back
    #expect(server.records.isLive(0))
  }

  @Test func inAnAtomicZoneOneFailureFailsEveryWriteAndChangesNothing() {
    var conditions = ServerConditions()
    conditions.atomic = true
    var server = ServerState(schema: schema, conditions: conditions)
    server.addRule(RejectRule(keys: [1], error: .referenceViolation, retryAfter: nil, until: seconds(60)))
    let results = push(&server, [save(0), save(1), save(2)], at: 1)
    #expect(
      results == [
        .failed(.batchRequestFailed, retryAfter: nil), .failed(.referenceViolation, retryAfter: nil), .failed(.batchRequestFailed, retryAfter: nil),
      ])
    #expect(server.records.count == 0)
    #expect(server.head == 0)
    #expect(push(&server, [save(0), save(2)], at: 2).allSatisfy { !$0.isFailure })
  }

  @Test func aDeletedZoneAnswersDevicesThatHaveNotReactedAndIsRecreatedByOneThatHas() {
    var server = ServerState(schema: schema)
    _ = push(&server, [save(0)])
    server.deleteZone(.purged)
    #expect(server.records.count == 0)
    #expect(!server.zoneExists)
    #expect(push(&server, [save(0)], zone: 0) == [.failed(.userDeletedZone, retryAfter: nil)])
    #expect(server.fetch(token: 1, from: 1, zone: 0, at: seconds(1), retention: .days(30)) == .zoneDeleted(.purged, epoch: 1))
    // A device that knows of it: its old token has expired, and its save re-creates the zone.
    #expect(server.fetch(token: 1, from: 1, zone: 1, at: seconds(1), retention: .days(30)) == .tokenExpired)
    #expect(!push(&server, [save(3)], zone: 1)[0].isFailure)
    #expect(server.zoneExists)
    var reset = ServerState(schema: schema)
    reset.deleteZone(.encryptedDataReset)
    #expect(push(&reset, [save(0)]) == [.failed(.zoneNotFound, retryAfter: nil)])
  }
}

@Suite struct ByteCountTests {
  @Test func sizesParseInDecimalUnitsAndPrintTheirShortestSpelling() throws {
    #expect(try ByteCount.parse("500B").get() == 500)
    #expect(try ByteCount.parse("250KB").get() == 250_000)
    #expect(try ByteCount.parse("1.5GB").get() == 1_500_000_000)
    #expect(try ByteCount.parse("2MB").get() == 2_000_000)
    for bad in ["", "KB", "12", "1.5B", "1..5KB", "-1KB", "1e3KB", "99999999999999999TB"] {
      #expect((try? ByteCount.parse(bad).get()) == nil, "\(bad)")
    }
    #expect(ByteCount.format(2_000_000) == "2MB")
    #expect(ByteCount.format(1_500_000) == "1500KB")
    #expect(ByteCount.format(17) == "17B")
    #expect(ByteCount.format(0) == "0B")
    for n: Int64 in [0, 1, 999, 1_000, 4_500, 20_000, 1_000_000_000, 123_456_789] {
      #expect(try ByteCount.parse(ByteCount.format(n)).get() == n)
    }
  }
}

/// How the engine reacts to CloudKit's answers, as the new axes say.
@Suite struct CloudKitEngineTests {
  func harness(_ overrides: String, _ configure: (inout ServerConditions) -> Void = { _ in }) -> Harness {
    var h = Harness("field-lww-hlc", overrides: overrides)
    var conditions = ServerConditions()
    configure(&conditions)
    var config = h.world.config
    config.server = conditions
    h.world = SyncWorld(config)
    return h
  }

  func gaveUp(_ h: Harness) -> [(keys: [RecordKey], error: CloudKitError, told: Bool)] {
    h.world.facts.events.compactMap { e in
      if case .gaveUp(let keys, let error, let told) = e.fact { return (keys, error, told) }
      return nil
    }
  }

  @Test func aTransientErrorIsRetriedAfterItsRetryAfter() {
    var h = harness("")
    h.at(0, .reject(RejectRule(keys: [0], error: .zoneBusy, retryAfter: .seconds(20), until: seconds(15))))
    h.at(1, 0, .create(type: note, key: 0, values: []))
    h.world.run(until: seconds(10))
    #expect(h.world.devices[0].waitingOn?.error == .zoneBusy)
    #expect(h.world.devices[0].holdUntil > seconds(20))
    h.runAndSettle()
    #expect(h.onServer(0))
    #expect(h.world.devices[0].waitingOn == nil)
    #expect(gaveUp(h).isEmpty)
  }

  @Test func retryNeverGivesUpAndNobodyIsTold() {
    var h = harness("retry=never")
    h.at(0, .reject(RejectRule(keys: [0], error: .zoneBusy, retryAfter: .seconds(20), until: seconds(15))))
    h.at(1, 0, .create(type: note, key: 0, values: []))
    h.runAndSettle()
    #expect(!h.onServer(0))
    #expect(h.visible(0, on: 0))
    #expect(gaveUp(h).map(\.keys) == [[0]])
    #expect(gaveUp(h).map(\.told) == [false])
  }

  @Test func aPermanentErrorIsGivenUpAndTheUserIsTold() {
    var h = harness("")
    h.at(0, .reject(RejectRule(keys: [0], error: .serverRejectedRequest, retryAfter: nil, until: seconds(15))))
    h.at(1, 0, .create(type: note, key: 0, values: []))
    h.runAndSettle()
    #expect(gaveUp(h).map(\.told) == [true])
    #expect(h.world.facts.settled)
  }

  @Test func anOversizedBatchIsSplitInHalves() {
    var h = harness("") { $0.maxRecordsPerRequest = 3 }
    h.at(0, .setOnline([0], false))
    for k in 0..<8 { h.at(1, 0, .create(type: note, key: RecordKey(k), values: [])) }
    h.at(5, .setOnline([0], true))
    h.runAndSettle()
    #expect((0..<8).allSatisfy { h.onServer(RecordKey($0)) })
    #expect(h.world.devices[0].batchLimit == 2)  // 8 → 4 (still over 3) → 2
  }

  @Test func withoutSplittingAnOversizedBatchStalls() {
    var h = harness("split=off") { $0.maxRecordsPerRequest = 3 }
    h.at(0, .setOnline([0], false))
    for k in 0..<4 { h.at(1, 0, .create(type: note, key: RecordKey(k), values: [])) }
    h.at(5, .setOnline([0], true))
    h.runAndSettle()
    #expect(!h.world.facts.settled)
    #expect(h.world.devices[0].waitingOn?.error == .limitExceeded)
    #expect(h.world.facts.events.contains { if case .stalled(let keys, .limitExceeded?) = $0.fact { keys.count == 4 } else { false } })
  }

  @Test func aPurgedZoneIsNotUploadedAgainUnlessTheEngineIsBuggy() {
    for (axis, comesBack) in [("", false), ("zone-deleted=reupload", true)] {
      var h = harness(axis)
      h.at(0, 0, .create(type: note, key: 0, values: []))
      h.at(5, .syncAll)
      h.at(10, .deleteZone(device: 1, .purged))
      h.runAndSettle()
      #expect(h.onServer(0) == comesBack, "\(axis)")
      #expect(h.visible(0, on: 0) == comesBack, "\(axis)")
    }
  }

  @Test func aDeviceAwayAcrossAPurgeAndThenAResetReactsToThePurge() {
    var h = harness("")
    h.at(0, 0, .create(type: note, key: 0, values: []))
    h.at(5, .syncAll)
    h.at(8, .setOnline([0], false))
    h.at(10, .deleteZone(device: 1, .purged))
    h.at(20, .deleteZone(device: nil, .encryptedDataReset))
    h.at(30, .setOnline([0], true))
    h.runAndSettle()
    // Told only of the reset, the iPad would upload the purged note again.
    #expect(!h.onServer(0))
    #expect(!h.visible(0, on: 0))
    #expect(h.world.server.zoneDeletions == [.purged, .encryptedDataReset])
  }

  @Test func afterAnEncryptedDataResetTheDevicesUploadEverythingAgain() {
    for (axis, kept) in [("", true), ("zone-deleted=wipe", false)] {
      var h = harness(axis)
      h.at(0, 0, .create(type: note, key: 0, values: []))
      h.at(5, .syncAll)
      h.at(10, .deleteZone(device: nil, .encryptedDataReset))
      h.runAndSettle()
      #expect(h.onServer(0) == kept, "\(axis)")
      #expect(h.visible(0, on: 1) == kept, "\(axis)")
    }
  }
}
