import Foundation
import Testing

@testable import SimSyncEngine

/// The API's own behaviour, without a simulated device: records, the state's coalescing and
/// serialization, and delegate calls run to completion.
@Suite struct SyncEngineAPITests {
  let zone = SyncRecordZoneID(zoneName: "Notes")
  func id(_ name: String) -> SyncRecordID { SyncRecordID(recordName: name, zoneID: zone) }

  @Test func aRecordKeepsFieldsByNameAndTracksWhatChanged() {
    let r = SyncRecord(recordType: "Note", recordID: id("n1"))
    r["title"] = "Groceries"
    r["pinned"] = true
    r["count"] = 3
    #expect(r["title"] as? String == "Groceries")
    #expect(r["pinned"] as? Bool == true)
    #expect(r["count"] as? Int == 3)
    #expect(r["missing"] == nil)
    #expect(r.allKeys() == ["count", "pinned", "title"])
    #expect(r.changedKeys() == ["count", "pinned", "title"])
    r["count"] = nil
    #expect(r.allKeys() == ["pinned", "title"])
    #expect(r.description == "Note n1 (Notes): pinned=bool(true) title=string(\"Groceries\")")
    let due = Date(timeIntervalSinceReferenceDate: 86_400)
    r["due"] = due
    #expect(r["due"] as? Date == due)
    let ref = SyncRecord.Reference(recordID: id("l1"), action: .deleteSelf)
    r["list"] = ref
    #expect(r["list"] as? SyncRecord.Reference == ref)
  }

  /// Found porting Apple's sample, whose `userModificationDate` starts at `.distantPast`: a
  /// date outside the 64-bit nanoseconds a record stores (1709…2293) trapped the whole process.
  /// The two distant dates now round-trip, others outside saturate in order, and none traps.
  @Test func datesOutsideTheStoredSpanDoNotTrapAndKeepTheirOrder() {
    let r = SyncRecord(recordType: "Contact", recordID: id("c"))
    func stored(_ d: Date) -> Date? {
      r["when"] = d
      return r["when"] as? Date
    }
    #expect(stored(.distantPast) == .distantPast)
    #expect(stored(.distantFuture) == .distantFuture)
    #expect(stored(Date(timeIntervalSinceReferenceDate: -1e13)) == .distantPast)
    #expect(stored(Date(timeIntervalSinceReferenceDate: 1e13)) == .distantFuture)
    #expect(stored(Date(timeIntervalSinceReferenceDate: .nan)) == .distantPast)
    #expect(stored(Date(timeIntervalSinceReferenceDate: .infinity)) == .distantFuture)
    let inside = Date(timeIntervalSinceReferenceDate: 9_000_000_000)  // 2286
    #expect(stored(inside) == inside)
    #expect(stored(.distantPast)! < stored(inside)! && stored(inside)! < stored(.distantFuture)!)
  }

  @Test func systemFieldsRoundTripWithoutTheFieldsAndAreDeterministic() throws {
    let r = SyncRecord(recordType: "Note", recordID: id("n1"))
    r.system.recordChangeTag = "7"
    r["title"] = "x"
    let data = r.encodedSystemFields
    #expect(data == r.copy().encodedSystemFields)
    let back = try #require(SyncRecord(systemFields: data))
    #expect(back.recordID == r.recordID && back.recordType == "Note" && back.recordChangeTag == "7")
    #expect(back.allKeys().isEmpty)
    #expect(SyncRecord(systemFields: Data("garbage".utf8)) == nil)
  }

  @Test func addingCoalescesPerRecordAsCKSyncEngineStateDoes() {
    let state = SyncEngine.State(nil)
    // Save then delete: only the delete is sent.
    state.add(pendingRecordZoneChanges: [.saveRecord(id("a")), .deleteRecord(id("a"))])
    #expect(state.pendingRecordZoneChanges == [.deleteRecord(id("a"))])
    // Delete then save: only the save is sent.
    state.add(pendingRecordZoneChanges: [.saveRecord(id("a"))])
    #expect(state.pendingRecordZoneChanges == [.saveRecord(id("a"))])
    // A change already pending is not added twice; order is the order added.
    state.add(pendingRecordZoneChanges: [.saveRecord(id("b")), .saveRecord(id("a"))])
    #expect(state.pendingRecordZoneChanges == [.saveRecord(id("a")), .saveRecord(id("b"))])
    state.remove(pendingRecordZoneChanges: [.saveRecord(id("a")), .deleteRecord(id("b"))])
    #expect(state.pendingRecordZoneChanges == [.saveRecord(id("b"))])
  }

  @Test func theSerializationRestoresTheStateAndEncodesDeterministically() throws {
    let state = SyncEngine.State(nil)
    state.add(pendingRecordZoneChanges: [.saveRecord(id("a")), .deleteRecord(id("b"))])
    state.add(pendingDatabaseChanges: [.saveZone(SyncRecordZone(zoneID: zone))])
    state.changeToken = 42
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data = try encoder.encode(state.serialization)
    #expect(try encoder.encode(state.serialization) == data)
    let restored = SyncEngine.State(try JSONDecoder().decode(SyncEngine.State.Serialization.self, from: data))
    #expect(restored.serialization == state.serialization)
    #expect(restored.pendingRecordZoneChanges == [.saveRecord(id("a")), .deleteRecord(id("b"))])
  }

  final class Recorder: SyncEngineDelegate, @unchecked Sendable {
    var events: [String] = []
    var records: [SyncRecordID: SyncRecord] = [:]
    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
      events.append(event.description)
      await note()
    }
    func note() async { events.append("noted") }
    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch? {
      await SyncEngine.RecordZoneChangeBatch(pendingChanges: syncEngine.state.pendingRecordZoneChanges) { self.records[$0] }
    }
  }

  @Test func anAsyncDelegateRunsToCompletionBeforeTheCallReturns() throws {
    let delegate = Recorder()
    let engine = SyncEngine(.init(database: SyncDatabase(device: 0), stateSerialization: nil, delegate: delegate))
    try engine.deliver(.willFetchChanges(.init(context: .init(reason: .scheduled))))
    try engine.deliver(.didFetchChanges(.init(context: .init(reason: .scheduled))))
    #expect(delegate.events == ["willFetchChanges", "noted", "didFetchChanges", "noted"])
    let note = SyncRecord(recordType: "Note", recordID: id("n1"))
    delegate.records[note.recordID] = note
    engine.state.add(pendingRecordZoneChanges: [.saveRecord(note.recordID), .saveRecord(id("gone")), .deleteRecord(id("old"))])
    let batch = try #require(try engine.nextBatch(.init(reason: .scheduled)))
    #expect(batch.recordsToSave.map(\.recordID) == [note.recordID])
    #expect(batch.recordIDsToDelete == [id("old")])
    // A save whose record the provider does not give is skipped and stays pending, as Apple
    // documents for `RecordZoneChangeBatch(pendingChanges:recordProvider:)`.
    #expect(engine.state.pendingRecordZoneChanges.contains(.saveRecord(id("gone"))))
  }

  final class Waits: SyncEngineDelegate, @unchecked Sendable {
    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async { try? await Task.sleep(nanoseconds: 1_000_000) }
    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch? {
      nil
    }
  }

  @Test func aDelegateThatWaitsOutsideTheSimulatorIsAnErrorNotAHang() {
    let delegate = Waits()
    let engine = SyncEngine(.init(database: SyncDatabase(device: 0), stateSerialization: nil, delegate: delegate))
    #expect(throws: SyncEngine.DelegateFailure.suspended) { try engine.deliver(.willSendChanges(.init(context: .init(reason: .manual)))) }
    withExtendedLifetime(delegate) {}
  }

  /// `CKSyncEngine.Configuration.delegate` is weak: an app that keeps no reference to its
  /// delegate loses it, and the run says so instead of syncing nothing in silence.
  @Test func theEngineHoldsItsDelegateWeaklyAsCKSyncEngineDoes() {
    let engine = SyncEngine(.init(database: SyncDatabase(device: 0), stateSerialization: nil, delegate: Waits()))
    #expect(engine.delegate == nil)
    #expect(throws: SyncEngine.DelegateFailure.released) { try engine.deliver(.willSendChanges(.init(context: .init(reason: .manual)))) }
    #expect(throws: SyncEngine.DelegateFailure.released) { try engine.nextBatch(.init(reason: .manual)) }
  }

  /// `CKSyncEngine.SendChangesOptions.Scope`, as delegates filter their batch with it.
  @Test func aSendScopeCoversWhatItNames() {
    let notes = SyncRecordZoneID(zoneName: "Notes")
    let other = SyncRecordZoneID(zoneName: "Other")
    let a = SyncRecordID(recordName: "a", zoneID: notes)
    let b = SyncRecordID(recordName: "b", zoneID: other)
    typealias Scope = SyncEngine.SendChangesOptions.Scope
    #expect(Scope.all.contains(SyncEngine.PendingRecordZoneChange.saveRecord(a)))
    #expect(Scope.zoneIDs([notes]).contains(a) && !Scope.zoneIDs([notes]).contains(b))
    #expect(!Scope.allExcluding([notes]).contains(SyncEngine.PendingRecordZoneChange.deleteRecord(a)))
    #expect(Scope.allExcluding([notes]).contains(b))
    #expect(Scope.recordIDs([b]).contains(other) && !Scope.recordIDs([b]).contains(notes))
    #expect(SyncEngine.SendChangesContext(reason: .scheduled).options.scope == .all)
  }
}
