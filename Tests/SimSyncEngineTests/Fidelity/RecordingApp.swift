import Foundation

@testable import SimSyncEngine

/// What the test apps did, by device: the events their delegates got (with a few details), in
/// order. One log per run, set by the test before it runs (tests of this suite run one at a time).
final class EventLog: @unchecked Sendable {
  nonisolated(unsafe) static var current = EventLog()
  private let lock = NSLock()
  private var lines: [String] = []
  func add(_ line: String) { lock.withLock { lines.append(line) } }
  var all: [String] { lock.withLock { lines } }
  func of(_ device: String) -> [String] { all.filter { $0.hasPrefix(device + " ") }.map { String($0.dropFirst(device.count + 1)) } }
}

/// A small app for the engine's tests: notes in a dictionary, written to disk on every change
/// with the state of the last `stateUpdate` only (as Apple's sample does), every event logged.
/// Subclasses change one thing each.
class RecordingApp: SimApp, SyncEngineDelegate, @unchecked Sendable {
  let device: SimDevice
  var rows: [String: [String: SyncValue]] = [:]
  var system: [String: Data] = [:]
  var state: SyncEngine.State.Serialization?
  var engine: SyncEngine!
  var syncEngine: SyncEngine { engine }
  class var schema: AppSchema { .anyTypes() }

  required init(device: SimDevice) {
    self.device = device
    if let data = device.disk["notes"], let saved = try? JSONDecoder().decode(Saved.self, from: data) {
      rows = saved.rows
      system = saved.system
      state = saved.state
    }
    engine = SyncEngine(.init(database: device.database, stateSerialization: state, delegate: self))
    launched()
  }

  /// Called at the end of `init`.
  func launched() {}

  struct Saved: Codable {
    var rows: [String: [String: SyncValue]]
    var system: [String: Data]
    var state: SyncEngine.State.Serialization?
  }

  func save() {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    device.disk["notes"] = try? encoder.encode(Saved(rows: rows, system: system, state: state))
  }

  func log(_ text: String) { EventLog.current.add("\(device.name) \(text)") }

  func perform(_ intent: AppIntent) async -> Bool {
    switch intent {
    case .create(_, let id, let values):
      rows[id.recordName] = Dictionary(values.map { ($0.field, $0.value) }, uniquingKeysWith: { $1 })
      log("perform create \(id.recordName) in \(id.zoneID)")
      syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    case .set(let id, let values):
      guard rows[id.recordName] != nil else { return false }
      for (f, v) in values { rows[id.recordName]![f] = v }
      syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    case .delete(let id):
      guard rows.removeValue(forKey: id.recordName) != nil else { return false }
      syncEngine.state.add(pendingRecordZoneChanges: [.deleteRecord(id)])
    case .append(let id, let field, let text):
      guard var row = rows[id.recordName], case .string(let old) = row[field] ?? .string("") else { return false }
      row[field] = .string(old + text)
      rows[id.recordName] = row
      syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    case .deleteZone:
      rows = [:]
    }
    await changed()
    save()
    return true
  }

  /// After a change in `perform`.
  func changed() async {}

  func shownRecords() async -> [SyncRecord] {
    rows.keys.sorted().map { name in
      let r = SyncRecord(recordType: "Note", recordID: SyncRecordID(recordName: name, zoneID: device.zoneID))
      for (f, v) in rows[name]! { r.fields[f] = v }
      return r
    }
  }

  func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    switch event {
    case .stateUpdate(let update):
      state = update.stateSerialization
      log("stateUpdate")
    case .sentDatabaseChanges(let sent):
      log("sentDatabaseChanges saved \(sent.savedZones.map(\.zoneID.description)) failed \(sent.failedZoneSaves.map(\.error.description))")
    case .sentRecordZoneChanges(let sent):
      var text = "sentRecordZoneChanges"
      for r in sent.savedRecords {
        system[r.recordID.recordName] = r.encodedSystemFields
        text += " saved \(r.recordID.recordName)"
        if let c = r.creationDate, let m = r.modificationDate {
          text += " created \(Int(c.timeIntervalSince1970 - SimDevice.epoch)) modified \(Int(m.timeIntervalSince1970 - SimDevice.epoch))"
        }
      }
      for f in sent.failedRecordSaves {
        text += " failed \(f.record.recordType) \(f.record.recordID.recordName) \(f.error) title=\((f.record["title"] as? String) ?? "-")"
        failed(f, syncEngine: syncEngine)
      }
      log(text)
    case .fetchedRecordZoneChanges(let changes):
      for m in changes.modifications {
        rows[m.record.recordID.recordName] = m.record.fields
        system[m.record.recordID.recordName] = m.record.encodedSystemFields
      }
      for d in changes.deletions { rows[d.recordID.recordName] = nil }
      log("fetchedRecordZoneChanges")
    case .willFetchRecordZoneChanges(let e): log("willFetchRecordZoneChanges \(e.zoneID)")
    case .didFetchRecordZoneChanges(let e): log("didFetchRecordZoneChanges \(e.zoneID)" + (e.error.map { " \($0)" } ?? ""))
    default:
      log("\(event)")
    }
    save()
  }

  /// A failed save (after it is logged).
  func failed(_ failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave, syncEngine: SyncEngine) {}

  func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch? {
    let pending = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
    return await SyncEngine.RecordZoneChangeBatch(pendingChanges: pending) { id in
      guard let fields = self.rows[id.recordName] else { return nil }
      let r = self.system[id.recordName].flatMap { SyncRecord(systemFields: $0) } ?? SyncRecord(recordType: "Note", recordID: id)
      for (f, v) in fields.sorted(by: { $0.key < $1.key }) { r[f] = v }
      return r
    }
  }
}

/// Sends at once: awaits `sendChanges()` after every change it makes.
final class SendingAtOnceApp: RecordingApp, @unchecked Sendable {
  override func changed() async { try? await syncEngine.sendChanges() }
}

/// Awaits `sendChanges()` inside `handleEvent`, where CKSyncEngine deadlocks.
final class DeadlockingApp: RecordingApp, @unchecked Sendable {
  override func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    if case .fetchedRecordZoneChanges = event { try? await syncEngine.sendChanges() }
    await super.handleEvent(event, syncEngine: syncEngine)
  }
}

/// Keeps its notes in a zone it did not declare, and saves that zone when a save of it fails.
final class OtherZoneApp: RecordingApp, @unchecked Sendable {
  static let other = SyncRecordZoneID(zoneName: "Elsewhere")
  override func perform(_ intent: AppIntent) async -> Bool {
    guard case .create(let type, let id, let values) = intent else { return await super.perform(intent) }
    return await super.perform(.create(recordType: type, recordID: SyncRecordID(recordName: id.recordName, zoneID: Self.other), values: values))
  }
  override func shownRecords() async -> [SyncRecord] {
    await super.shownRecords().map { r in
      let moved = SyncRecord(recordType: r.recordType, recordID: SyncRecordID(recordName: r.recordID.recordName, zoneID: Self.other))
      for k in r.allKeys() { moved[k] = r.fields[k] }
      return moved
    }
  }
  override func failed(_ failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave, syncEngine: SyncEngine) {
    guard failure.error.code == .zoneNotFound else { return }
    syncEngine.state.add(pendingDatabaseChanges: [.saveZone(SyncRecordZone(zoneID: failure.record.recordID.zoneID))])
    syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(failure.record.recordID)])
  }
}

/// Names its records by UUID.
final class UUIDApp: RecordingApp, @unchecked Sendable {
  override class var schema: AppSchema { AppSchema("type Note\n  title: string = \"\" mutable\n", recordNames: .uuids) }
}

/// Refuses every change it is asked to make: a run of it tests nothing.
final class RefusingApp: RecordingApp, @unchecked Sendable {
  override func perform(_ intent: AppIntent) async -> Bool { false }
}

/// States a schema that does not parse.
final class BadSchemaApp: RecordingApp, @unchecked Sendable {
  override class var schema: AppSchema { AppSchema("type Note\n  title: strin = \"\"\n") }
}
