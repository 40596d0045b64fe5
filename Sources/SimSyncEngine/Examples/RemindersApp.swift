import Foundation

/// The second reference app: reminders in lists, written as a real CKSyncEngine app is — a store
/// that is an `actor` and is also the engine's delegate (as in Apple's sample), records named by
/// UUID, a `Reminders` zone, a reference from each reminder to its list with a delete rule the
/// app carries out itself, and a text field that two devices append to at once. It keeps what
/// it has not sent in its own rows (dirty fields, deletes not yet acknowledged) and gives them to
/// its engine again at launch, so that a kill before the engine's next `stateUpdate` loses
/// nothing — the way an app must, since `CKSyncEngine` hands the state to the app only in that
/// event.
///
/// Each field carries a version (a Lamport counter and the device), saved in the record under
/// `~v` as `field=counter@device`; the notes are pieces of text, one per write, under `~notes`.
/// Its planted-bug twins (``RemindersAppNotCascading``, ``RemindersAppIgnoringFailedDeletes``,
/// ``RemindersAppNotSavingItsZone``, ``RemindersAppKeepingOneDevicesNotes``) each get one thing
/// wrong.
///
///     expectScenarioHolds(app: RemindersApp.self, scenario: "app-conflicting-save")
public class RemindersApp: SimApp, @unchecked Sendable {
  /// Lists, and reminders that refer to their list (deleted with it); UUID names; zone
  /// `Reminders`.
  public class var schema: AppSchema {
    AppSchema(
      """
      type List
        name: string = "" mutable
      type Reminder
        list: ref List? mutable on-delete cascade
        title: string = "" mutable
        priority: int = 0 mutable
        notes: text = ""
      """, recordNames: .uuids, zoneName: "Reminders")
  }

  /// What this variant gets wrong (nothing, for the reference app).
  class var flaws: ReminderStore.Flaws { [] }

  let store: ReminderStore
  /// The app's sync engine.
  public let syncEngine: SyncEngine

  /// Launches the app: reads its rows from the device's disk, makes the engine with the state it
  /// stored last, and gives the engine again what its rows say is unsent.
  public required init(device: SimDevice) {
    let saved = ReminderStore.Saved.read(from: device.disk)
    store = ReminderStore(disk: device.disk, zone: device.zoneID, device: device.name, saved: saved, flaws: Self.flaws)
    syncEngine = SyncEngine(.init(database: device.database, stateSerialization: saved.meta.state, delegate: store))
    let unsent = ReminderStore.unsent(saved, zone: device.zoneID)
    if !unsent.isEmpty { syncEngine.state.add(pendingRecordZoneChanges: unsent) }
  }

  /// The user's change, made in the store.
  public func perform(_ intent: AppIntent) async -> Bool { await store.perform(intent, engine: syncEngine) }

  /// The lists and reminders, one record per row.
  public func shownRecords() async -> [SyncRecord] { await store.shown() }

  /// The rows changed since the simulator last asked (the store notes them as it writes them).
  public func shownRecordChanges() async -> SimShownChanges? { await store.shownChanges() }
}

/// The reminders app's store and its engine's delegate.
public final actor ReminderStore: SyncEngineDelegate {
  /// Bugs a planted-bug twin plants.
  struct Flaws: OptionSet, Sendable {
    let rawValue: Int
    /// Deleting a list leaves its reminders.
    static let noCascade = Flaws(rawValue: 1)
    /// Deletes that fail are forgotten.
    static let ignoresFailedDeletes = Flaws(rawValue: 2)
    /// `zoneNotFound` is treated as a failure to give up on.
    static let neverSavesZone = Flaws(rawValue: 4)
    /// The notes are one string, replaced whole by the newer version.
    static let oneStringNotes = Flaws(rawValue: 8)
  }

  /// A field's version: a Lamport counter and the device that wrote it.
  struct Version: Codable, Hashable, Comparable {
    var counter: Int64
    var device: String
    static func < (a: Version, b: Version) -> Bool { (a.counter, a.device) < (b.counter, b.device) }
    var text: String { "\(counter)@\(device)" }
    init(counter: Int64, device: String) {
      self.counter = counter
      self.device = device
    }
    init?(_ s: Substring) {
      guard let at = s.firstIndex(of: "@"), let n = Int64(s[..<at]) else { return nil }
      counter = n
      device = String(s[s.index(after: at)...])
    }
    static let zero = Version(counter: 0, device: "")

    func write(to w: inout CompactWriter) {
      w.int(counter)
      w.string(device)
    }
    init(from r: inout CompactReader) throws(CompactReader.Malformed) {
      counter = try r.int()
      device = try r.string()
    }
  }

  /// A piece of the notes: what one write put there.
  struct Piece: Codable, Hashable {
    var version: Version
    var text: String

    init(version: Version, text: String) {
      self.version = version
      self.text = text
    }
    func write(to w: inout CompactWriter) {
      version.write(to: &w)
      w.string(text)
    }
    init(from r: inout CompactReader) throws(CompactReader.Malformed) {
      version = try Version(from: &r)
      text = try r.string()
    }
  }

  /// A list or a reminder as the app keeps it.
  struct Row: Codable, Equatable {
    var type: String
    var fields: [String: SyncValue] = [:]
    var versions: [String: Version] = [:]
    /// Fields edited here and not yet saved, sorted.
    var dirty: [String] = []
    /// The last version the server confirmed (its system fields).
    var system: Data?
    /// The notes' pieces, in version order, and the versions of pieces a set removed.
    var pieces: [Piece] = []
    var removed: [Version] = []

    /// The row as the app stores it, in a compact binary form (see `NotesApp.Row.stored`).
    var stored: Data {
      var w = CompactWriter(reserving: 256)
      w.string(type)
      w.values(fields)
      w.dictionary(versions) { $1.write(to: &$0) }
      w.strings(dirty)
      w.optional(system) { $0.data($1) }
      w.list(pieces) { $1.write(to: &$0) }
      w.list(removed) { $1.write(to: &$0) }
      return w.data
    }
  }

  /// What the app stores besides its rows.
  struct Meta: Codable, Equatable {
    var clock: Int64 = 0
    var state: SyncEngine.State.Serialization?
    /// Rows deleted here whose delete the server has not acknowledged, sorted.
    var deletes: [String] = []
    /// Whether a fetch from no token ended, as of `state`; and during the first fetch, the
    /// records it brought.
    var fetched = false
    var seen: [String]?
    /// The iCloud user the rows belong to.
    var user: String?
    /// Lists known deleted (here, or fetched), sorted: a reminder fetched later in one of them
    /// goes too.
    var goneLists: [String] = []
    /// Rows whose first save went out and got no answer that says whether the server took it,
    /// sorted: not sent again until a fetch has said (sent again without a change tag after
    /// another device deleted it, the row would be a new record: CloudKit keeps no tombstone).
    var unconfirmed: [String] = []
  }

  /// Rows and meta, read from the disk at launch.
  struct Saved {
    var rows: [String: Row] = [:]
    var meta = Meta()

    static func read(from disk: SimDisk) -> Saved {
      var saved = Saved()
      let rows = disk.table("rows")
      for name in rows.keys {
        if let data = rows.get(name), let row = Row(stored: data) { saved.rows[name] = row }
      }
      if let meta = Meta(from: disk.table("meta")) { saved.meta = meta }
      return saved
    }
  }

  let disk: SimDisk
  /// The rows, by record name, and the parts of ``Meta``: the app's keyed stores on the disk.
  let rowTable: SimDisk.Table
  let metaTable: SimDisk.Table
  /// The meta as last written by this launch (a part is written again only when it changed).
  var lastMeta: Meta?
  /// The names of the rows whose shown part (type, fields) changed since the simulator last
  /// asked; nil until it first asks.
  var shownChanged: Set<String>?
  let zone: SyncRecordZoneID
  let device: String
  let flaws: Flaws
  var rows: [String: Row]
  var meta: Meta
  /// Rows changed since they were last written.
  var touched: Set<String> = []
  /// The first fetch's progress in memory (``Meta`` keeps it as of the stored state).
  var fetched: Bool
  var seen: Set<String>?
  /// Whether the fetch under way failed (a zone's `didFetchRecordZoneChanges` had an error).
  var fetchFailed = false

  init(disk: SimDisk, zone: SyncRecordZoneID, device: String, saved: Saved, flaws: Flaws) {
    self.disk = disk
    rowTable = disk.table("rows")
    metaTable = disk.table("meta")
    self.zone = zone
    self.device = device
    self.flaws = flaws
    rows = saved.rows
    meta = saved.meta
    fetched = saved.meta.fetched
    seen = saved.meta.seen.map(Set.init)
  }

  // MARK: Storage

  func id(_ name: String) -> SyncRecordID { SyncRecordID(recordName: name, zoneID: zone) }

  /// Writes the changed rows and the parts of the meta that changed.
  func write() {
    for name in touched.sorted() {
      if let row = rows[name] { rowTable.put(name, row.stored) } else { rowTable.delete(name) }
    }
    touched = []
    guard meta != lastMeta else { return }
    meta.write(to: metaTable, over: lastMeta)
    lastMeta = meta
  }

  func put(_ name: String, _ row: Row?) {
    if shownChanged != nil {
      let old = rows[name]
      if old?.type != row?.type || old?.fields != row?.fields { shownChanged?.insert(name) }
    }
    rows[name] = row
    touched.insert(name)
  }

  /// A new version: after every version this device has written or seen.
  func tick() -> Version {
    meta.clock += 1
    return Version(counter: meta.clock, device: device)
  }

  /// What the rows say is unsent: at launch it goes to the engine again (a change made just
  /// before a kill may not be in the state the engine last gave the app).
  nonisolated static func unsent(_ saved: Saved, zone: SyncRecordZoneID) -> [SyncEngine.PendingRecordZoneChange] {
    var changes: [SyncEngine.PendingRecordZoneChange] = []
    for (name, row) in saved.rows.sorted(by: { $0.key < $1.key }) where !row.dirty.isEmpty {
      changes.append(.saveRecord(SyncRecordID(recordName: name, zoneID: zone)))
    }
    for name in saved.meta.deletes { changes.append(.deleteRecord(SyncRecordID(recordName: name, zoneID: zone))) }
    return changes
  }

  /// What the rows say is unsent goes to the engine again (after an account change cleared it).
  func reconcile(_ engine: SyncEngine) {
    let changes = Self.unsent(Saved(rows: rows, meta: meta), zone: zone)
    if !changes.isEmpty { engine.state.add(pendingRecordZoneChanges: changes) }
  }

  // MARK: The user's changes

  func perform(_ intent: AppIntent, engine: SyncEngine) -> Bool {
    defer { write() }
    switch intent {
    case .create(let type, let recordID, let values):
      var row = Row(type: type)
      set(values, in: &row)
      put(recordID.recordName, row)
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
    case .set(let recordID, let values):
      guard var row = rows[recordID.recordName] else { return false }
      set(values, in: &row)
      put(recordID.recordName, row)
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
    case .append(let recordID, let field, let text):
      guard var row = rows[recordID.recordName], field == "notes" else { return false }
      let version = tick()
      if flaws.contains(.oneStringNotes) {
        row.fields[field] = .string((row.fields[field].flatMap { String(syncValue: $0) } ?? "") + text)
      } else {
        row.pieces.append(Piece(version: version, text: text))
        row.fields[field] = .string(row.pieces.map(\.text).joined())
      }
      row.versions[field] = version
      markDirty(field, in: &row)
      put(recordID.recordName, row)
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
    case .delete(let recordID):
      guard rows[recordID.recordName] != nil else { return false }
      delete(recordID.recordName, engine: engine)
    case .deleteZone(let zoneID):
      // Everything goes, here and on the server (Apple's sample: `deleteServerData`).
      for name in rows.keys.sorted() { put(name, nil) }
      meta.deletes = []
      engine.state.remove(pendingRecordZoneChanges: engine.state.pendingRecordZoneChanges)
      engine.state.add(pendingDatabaseChanges: [.deleteZone(zoneID)])
      startOver()
    }
    return true
  }

  /// Writes values as this device's newest: a set of the notes replaces the pieces it saw.
  func set(_ values: [(field: String, value: SyncValue)], in row: inout Row) {
    let version = tick()
    for (field, value) in values {
      if field == "notes", !flaws.contains(.oneStringNotes), case .string(let text) = value {
        row.removed = Array(Set(row.removed).union(row.pieces.map(\.version))).sorted()
        row.pieces = text.isEmpty ? [] : [Piece(version: version, text: text)]
      }
      row.fields[field] = value
      row.versions[field] = version
      markDirty(field, in: &row)
    }
  }

  func markDirty(_ field: String, in row: inout Row) {
    if !row.dirty.contains(field) {
      row.dirty.append(field)
      row.dirty.sort()
    }
  }

  /// Deletes a row here and on the server; a list's reminders go with it (its delete rule).
  func delete(_ name: String, engine: SyncEngine) {
    guard let row = rows[name] else { return }
    put(name, nil)
    if row.type == "List" { noteGone(name) }
    if !meta.deletes.contains(name) {
      meta.deletes.append(name)
      meta.deletes.sort()
    }
    engine.state.add(pendingRecordZoneChanges: [.deleteRecord(id(name))])
    if row.type == "List", !flaws.contains(.noCascade) {
      for (child, r) in rows.sorted(by: { $0.key < $1.key }) where r.type == "Reminder" && listName(of: r) == name {
        delete(child, engine: engine)
      }
    }
  }

  func noteGone(_ list: String) {
    if !meta.goneLists.contains(list) {
      meta.goneLists.append(list)
      meta.goneLists.sort()
    }
  }

  func listName(of row: Row) -> String? {
    if case .reference(let ref)? = row.fields["list"] { return ref.recordID.recordName }
    return nil
  }

  /// The next fetch starts from nothing.
  func startOver() {
    fetched = false
    seen = nil
  }

  // MARK: What the app shows

  func shown() -> [SyncRecord] { rows.keys.sorted().map { shown(rows[$0]!, name: $0) } }

  func shown(_ row: Row, name: String) -> SyncRecord {
    let r = SyncRecord(recordType: row.type, recordID: id(name))
    for (f, v) in row.fields { r.fields[f] = v }
    return r
  }

  /// The rows whose type or fields changed since the simulator last asked; nil the first time,
  /// when it reads them all.
  func shownChanges() -> SimShownChanges? {
    guard let changed = shownChanged else {
      shownChanged = []
      return nil
    }
    shownChanged = []
    return SimShownChanges(names: changed.sorted()) { name in rows[name].map { shown($0, name: name) } }
  }

  // MARK: Records

  /// The record to send: the last confirmed version's system fields, the fields, their
  /// versions and the notes' pieces.
  func record(_ name: String) -> SyncRecord? {
    guard let row = rows[name] else { return nil }
    let r = row.system.flatMap { SyncRecord(systemFields: $0) } ?? SyncRecord(recordType: row.type, recordID: id(name))
    for (f, v) in row.fields.sorted(by: { $0.key < $1.key }) { r[f] = v }
    r["~v"] = row.versions.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.text)" }
    if row.type == "Reminder", !flaws.contains(.oneStringNotes) {
      r["~notes"] = row.pieces.flatMap { [$0.version.text, $0.text] }
      r["~removed"] = row.removed.map(\.text)
    }
    return r
  }

  /// A server version merged into the row: per field the newer version wins (an edit here not
  /// yet saved stays unless a later one is on the server); the notes are the union of both
  /// sides' pieces, less those either side removed. A row deleted here, whose delete is not
  /// acknowledged yet, stays deleted.
  func merge(_ server: SyncRecord) {
    let name = server.recordID.recordName
    if meta.deletes.contains(name) { return }
    // (The server has it: a first fetch under way does not take it for deleted.)
    seen?.insert(name)
    var row = rows[name] ?? Row(type: server.recordType)
    var theirs: [String: Version] = [:]
    if case .strings(let list)? = server.fields["~v"] {
      for entry in list {
        guard let eq = entry.firstIndex(of: "="), let v = Version(entry[entry.index(after: eq)...]) else { continue }
        theirs[String(entry[..<eq])] = v
        meta.clock = max(meta.clock, v.counter)
      }
    }
    for key in server.allKeys() where !key.hasPrefix("~") {
      if key == "notes", !flaws.contains(.oneStringNotes) {
        mergeNotes(server, into: &row)
        continue
      }
      let their = theirs[key] ?? .zero
      let ours = row.versions[key] ?? .zero
      if row.fields[key] != nil, ours > their || (row.dirty.contains(key) && ours == their) { continue }
      row.fields[key] = server.fields[key]
      row.versions[key] = their
      row.dirty.removeAll { $0 == key }
    }
    row.system = server.encodedSystemFields
    put(name, row)
  }

  func mergeNotes(_ server: SyncRecord, into row: inout Row) {
    var theirs: [Piece] = []
    if case .strings(let flat)? = server.fields["~notes"] {
      for i in stride(from: 0, to: flat.count - 1, by: 2) {
        if let v = Version(Substring(flat[i])) { theirs.append(Piece(version: v, text: flat[i + 1])) }
      }
    }
    var theirRemoved: Set<Version> = []
    if case .strings(let flat)? = server.fields["~removed"] { theirRemoved = Set(flat.compactMap { Version(Substring($0)) }) }
    for p in theirs { meta.clock = max(meta.clock, p.version.counter) }
    let removed = theirRemoved.union(row.removed)
    var all = row.pieces
    for p in theirs where !all.contains(where: { $0.version == p.version }) { all.append(p) }
    all.removeAll { removed.contains($0.version) }
    all.sort { $0.version < $1.version }
    let serverHasAll = Set(all.map(\.version)) == Set(theirs.map(\.version)).subtracting(theirRemoved) && removed == theirRemoved
    row.pieces = all
    row.removed = removed.sorted()
    row.fields["notes"] = .string(all.map(\.text).joined())
    if let newest = all.last?.version { row.versions["notes"] = max(row.versions["notes"] ?? .zero, newest) }
    if serverHasAll { row.dirty.removeAll { $0 == "notes" } }
  }

  /// A record deleted on the server: the row goes, and a list's reminders with it — deleted on
  /// the server too (one made here meanwhile may be there already, or on its way).
  func deletedElsewhere(_ name: String, engine: SyncEngine, cascadeNow: Bool = true) {
    guard let row = rows[name] else { return }
    meta.unconfirmed.removeAll { $0 == name }
    put(name, nil)
    if row.type == "List" { noteGone(name) }
    engine.state.remove(pendingRecordZoneChanges: [.saveRecord(id(name))])
    if row.type == "List", cascadeNow, !flaws.contains(.noCascade) {
      for (child, r) in rows.sorted(by: { $0.key < $1.key }) where r.type == "Reminder" && listName(of: r) == name {
        delete(child, engine: engine)
      }
    }
  }

  /// A fetched reminder in a list this device deleted: it goes too (the list's delete rule), and
  /// is deleted on the server.
  func dropOrphans(engine: SyncEngine) {
    guard !flaws.contains(.noCascade) else { return }
    for (name, row) in rows.sorted(by: { $0.key < $1.key }) where row.type == "Reminder" {
      if let list = listName(of: row), rows[list] == nil, meta.goneLists.contains(list) { delete(name, engine: engine) }
    }
  }

  // MARK: The engine's events

  /// Handles one of the engine's events: the state to persist, what was fetched, what was sent.
  public func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    switch event {
    case .stateUpdate(let update):
      meta.state = update.stateSerialization
      meta.fetched = fetched
      meta.seen = seen.map { $0.sorted() }
    case .accountChange(let change):
      accountChanged(change.changeType, engine: syncEngine)
    case .fetchedDatabaseChanges(let changes):
      for deletion in changes.deletions where deletion.zoneID == zone { zoneDeleted(deletion.reason, engine: syncEngine) }
    case .willFetchChanges:
      if !fetched && seen == nil { seen = [] }
      fetchFailed = false
    case .didFetchRecordZoneChanges(let done):
      if done.error != nil { fetchFailed = true }
    case .fetchedRecordZoneChanges(let changes):
      for m in changes.modifications {
        seen?.insert(m.record.recordID.recordName)
        merge(m.record)
      }
      for d in changes.deletions { deletedElsewhere(d.recordID.recordName, engine: syncEngine) }
      dropOrphans(engine: syncEngine)
    case .didFetchChanges:
      // A fetch that failed brought only part of what the server has: nothing is judged deleted.
      guard !fetchFailed else { break }
      if let seen {
        // A fetch from no token reports no deletions of records made elsewhere: a row the
        // server had and the fetch did not bring was deleted meanwhile.
        for (name, row) in rows.sorted(by: { $0.key < $1.key }) where row.system != nil && !seen.contains(name) {
          if !syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(id(name))) { deletedElsewhere(name, engine: syncEngine) }
        }
      }
      seen = nil
      fetched = true
      dropOrphans(engine: syncEngine)
      // The rows whose first save was left unknown: the fetch brought the row (sent again with
      // its tag if something here is newer), or said nothing of it (it never reached the
      // server: sent again); one it reported deleted is gone.
      if !meta.unconfirmed.isEmpty {
        for name in meta.unconfirmed {
          // (Taken out and added again: a skipped change is sent again only when one is added.)
          syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(id(name))])
          if let row = rows[name], row.system == nil || !row.dirty.isEmpty { syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(id(name))]) }
        }
        meta.unconfirmed = []
      }
    case .sentDatabaseChanges(let sent):
      for failure in sent.failedZoneSaves where !failure.error.code.isRetriedByTheEngine {
        syncEngine.state.add(pendingDatabaseChanges: [.saveZone(failure.zone)])
      }
    case .sentRecordZoneChanges(let sent):
      for record in sent.savedRecords { saved(record) }
      for name in sent.deletedRecordIDs.map(\.recordName) { meta.deletes.removeAll { $0 == name } }
      for failure in sent.failedRecordSaves { failedSave(failure.record, failure.error, engine: syncEngine) }
      for (recordID, error) in sent.failedRecordDeletes { failedDelete(recordID, error, engine: syncEngine) }
    default:
      break
    }
    write()
  }

  /// A save went through: fields whose version the save carried are clean.
  func saved(_ record: SyncRecord) {
    let name = record.recordID.recordName
    guard var row = rows[name] else { return }
    row.system = record.encodedSystemFields
    var sent: [String: Version] = [:]
    if case .strings(let list)? = record.fields["~v"] {
      for entry in list {
        if let eq = entry.firstIndex(of: "="), let v = Version(entry[entry.index(after: eq)...]) { sent[String(entry[..<eq])] = v }
      }
    }
    row.dirty.removeAll { sent[$0] != nil && sent[$0] == row.versions[$0] }
    if flaws.contains(.oneStringNotes) { row.dirty.removeAll { $0 == "notes" && record.fields["notes"] == row.fields["notes"] } }
    seen?.insert(name)
    put(name, row)
  }

  func failedSave(_ record: SyncRecord, _ error: SyncError, engine: SyncEngine) {
    let name = record.recordID.recordName
    if let row = rows[name], row.system == nil, NotesApp.leavesTheSaveUnknown(error.code) {
      // A first save whose answer never came: a fetch says whether the server has the row.
      // The change stays pending; the batch skips it meanwhile.
      if !meta.unconfirmed.contains(name) { meta.unconfirmed = (meta.unconfirmed + [name]).sorted() }
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)])
      return
    }
    switch error.code {
    case .serverRecordChanged:
      if let server = error.serverRecord { merge(server) }
      if rows[name].map({ !$0.dirty.isEmpty }) == true { engine.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)]) }
    case .unknownItem:
      // Deleted elsewhere: the delete wins. A list's reminders go once the fetch that follows
      // has brought what happened to them meanwhile (one may have moved to another list).
      deletedElsewhere(name, engine: engine, cascadeNow: false)
    case .zoneNotFound:
      guard !flaws.contains(.neverSavesZone) else { return }
      // The zone is not there (deleted, or never saved): save it, and send the change again —
      // the next fetch says whether the zone was deleted and what goes with it.
      engine.state.add(pendingDatabaseChanges: [.saveZone(SyncRecordZone(zoneID: zone))])
      if rows[name] != nil { engine.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)]) }
    case .userDeletedZone:
      // Deleted in Settings: the next fetch says what goes (what the server had) and what
      // stays (what it never had). Until then the change stays.
      if rows[name] != nil { engine.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)]) }
    case .serverRejectedRequest:
      break  // refused for good
    default:
      if !error.code.isRetriedByTheEngine, rows[name] != nil { engine.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)]) }
    }
  }

  func failedDelete(_ recordID: SyncRecordID, _ error: SyncError, engine: SyncEngine) {
    switch error.code {
    case .unknownItem, .zoneNotFound, .userDeletedZone:
      meta.deletes.removeAll { $0 == recordID.recordName }  // gone already
    default:
      if flaws.contains(.ignoresFailedDeletes) {
        meta.deletes.removeAll { $0 == recordID.recordName }
      } else if !error.code.isRetriedByTheEngine {
        engine.state.add(pendingRecordZoneChanges: [.deleteRecord(recordID)])
      }
    }
  }

  /// The zone was deleted. Deleted by the user or purged: the rows the server had go with it,
  /// with what was pending for them; rows never uploaded stay and go to the zone made again.
  /// After an encrypted-data reset every row is uploaded again.
  func zoneDeleted(_ reason: SyncEngine.Event.FetchedDatabaseChanges.Deletion.Reason, engine: SyncEngine) {
    for (name, row) in rows.sorted(by: { $0.key < $1.key }) where row.system != nil || reason == .encryptedDataReset {
      if reason == .encryptedDataReset {
        var again = row
        again.system = nil
        again.dirty = Array(row.fields.keys).sorted()
        put(name, again)
        engine.state.add(pendingRecordZoneChanges: [.saveRecord(id(name))])
      } else {
        put(name, nil)
        engine.state.remove(pendingRecordZoneChanges: [.saveRecord(id(name))])
      }
    }
    engine.state.remove(pendingRecordZoneChanges: meta.deletes.map { .deleteRecord(id($0)) })
    meta.deletes = []
    // A reminder made here since, in a list the zone took, goes with its list (its delete rule).
    if !flaws.contains(.noCascade) {
      for (name, row) in rows.sorted(by: { $0.key < $1.key }) where row.type == "Reminder" {
        if let list = listName(of: row), rows[list] == nil {
          put(name, nil)
          engine.state.remove(pendingRecordZoneChanges: [.saveRecord(id(name))])
        }
      }
    }
    startOver()
    if !flaws.contains(.neverSavesZone) { engine.state.add(pendingDatabaseChanges: [.saveZone(SyncRecordZone(zoneID: zone))]) }
  }

  /// The iCloud account changed; the engine has cleared its state. Signing out keeps the rows
  /// (they are the user's, unsent edits included); signing in as the user they belong to sends
  /// what is unsent again; another user's rows are not this one's to see, and go.
  func accountChanged(_ change: SyncEngine.Event.AccountChange.ChangeType, engine: SyncEngine) {
    startOver()
    switch change {
    case .signOut:
      break
    case .signIn(let user), .switchAccounts(_, let user):
      if let owner = meta.user, owner != user {
        for name in rows.keys.sorted() { put(name, nil) }
        meta.deletes = []
      }
      meta.user = user
      reconcile(engine)
    }
  }

  /// The pending changes in the send's scope, as records from the rows.
  public func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
    -> SyncEngine.RecordZoneChangeBatch?
  {
    // A list's delete waits until no reminder's move is unconfirmed: sent with (or before) a
    // move out of the list that the server then refuses, it would leave the reminder in a
    // deleted list on the server, and every device would delete it with its list.
    let movesPending = rows.values.contains { $0.type == "Reminder" && $0.dirty.contains("list") }
    let changes = syncEngine.state.pendingRecordZoneChanges.filter { change in
      guard context.options.scope.contains(change) else { return false }
      if movesPending, case .deleteRecord(let id) = change, meta.goneLists.contains(id.recordName) { return false }
      return true
    }
    var gone: [SyncEngine.PendingRecordZoneChange] = []
    var records: [SyncRecordID: SyncRecord] = [:]
    for case .saveRecord(let id) in changes {
      // (A row whose first save is unknown is skipped, and stays pending, until a fetch says.)
      if meta.unconfirmed.contains(id.recordName) { continue }
      if let r = record(id.recordName) { records[id] = r } else { gone.append(.saveRecord(id)) }
    }
    if !gone.isEmpty { syncEngine.state.remove(pendingRecordZoneChanges: gone) }
    return await SyncEngine.RecordZoneChangeBatch(pendingChanges: changes.filter { !gone.contains($0) }) { records[$0] }
  }
}

/// Planted bug: deleting a list leaves its reminders, here and when the deletion is fetched —
/// they refer to a list that is gone (`dangling-reference`).
public final class RemindersAppNotCascading: RemindersApp, @unchecked Sendable {
  override class var flaws: ReminderStore.Flaws { .noCascade }
}

/// Planted bug: a delete that fails with an error the engine leaves to the app (a lost answer,
/// a failed atomic batch) is forgotten — the reminder stays on the server and the other devices
/// (`resurrection`).
public final class RemindersAppIgnoringFailedDeletes: RemindersApp, @unchecked Sendable {
  override class var flaws: ReminderStore.Flaws { .ignoresFailedDeletes }
}

/// Planted bug: the app never saves its zone again after it is deleted — what it makes after
/// that is never saved (`stranded-record`, `stalled-sync`).
public final class RemindersAppNotSavingItsZone: RemindersApp, @unchecked Sendable {
  override class var flaws: ReminderStore.Flaws { .neverSavesZone }
}

/// Planted bug: the notes are one string, replaced whole by the newer version: of two devices'
/// appends made at once, one is lost (`lost-edit`).
public final class RemindersAppKeepingOneDevicesNotes: RemindersApp, @unchecked Sendable {
  override class var flaws: ReminderStore.Flaws { .oneStringNotes }
}

extension ReminderStore.Row {
  /// A row read back from what ``stored`` wrote; nil for other bytes.
  init?(stored data: Data) {
    var r = CompactReader(data)
    typealias Malformed = CompactReader.Malformed
    do throws(Malformed) {
      type = try r.string()
      fields = try r.values()
      versions = try r.dictionary { r throws(Malformed) in try ReminderStore.Version(from: &r) }
      dirty = try r.strings()
      system = try r.optional { r throws(Malformed) in try r.data() }
      pieces = try r.list { r throws(Malformed) in try ReminderStore.Piece(from: &r) }
      removed = try r.list { r throws(Malformed) in try ReminderStore.Version(from: &r) }
    } catch {
      return nil
    }
    guard r.atEnd else { return nil }
  }
}

extension ReminderStore.Meta {
  /// Writes the parts that differ from `old` (all of them when there is no `old`) into `table`,
  /// each a row: `clock`, `state`, `deletes`, `fetch`, `user`, `goneLists` (a part that is nil
  /// is deleted).
  func write(to table: SimDisk.Table, over old: Self?) {
    if old?.clock != clock { table.put("clock") { $0.int(clock) } }
    if old == nil || old?.state != state {
      if let state { table.put("state") { $0.state(state) } } else { table.delete("state") }
    }
    if old?.deletes != deletes { table.put("deletes") { $0.strings(deletes) } }
    if old?.fetched != fetched || old?.seen != seen {
      table.put("fetch") { w in
        w.bool(fetched)
        w.optional(seen) { $0.strings($1) }
      }
    }
    if old == nil || old?.user != user {
      if let user { table.put("user") { $0.string(user) } } else { table.delete("user") }
    }
    if old?.goneLists != goneLists { table.put("goneLists") { $0.strings(goneLists) } }
    if (old?.unconfirmed ?? []) != unconfirmed {
      if unconfirmed.isEmpty { table.delete("unconfirmed") } else { table.put("unconfirmed") { $0.strings(unconfirmed) } }
    }
  }

  /// What `table` holds; nil when it holds nothing (no `clock`) or bytes of another kind.
  init?(from table: SimDisk.Table) {
    typealias Malformed = CompactReader.Malformed
    self.init()
    do throws(Malformed) {
      guard let clock = try table.row("clock", { r throws(Malformed) in try r.int() }) else { return nil }
      self.clock = clock
      if let state = try table.row("state", { r throws(Malformed) in try r.state() }) { self.state = state }
      if let deletes = try table.row("deletes", { r throws(Malformed) in try r.strings() }) { self.deletes = deletes }
      let fetch = try table.row("fetch") { r throws(Malformed) in (try r.bool(), try r.optional { r throws(Malformed) in try r.strings() }) }
      if let fetch { (fetched, seen) = fetch }
      if let user = try table.row("user", { r throws(Malformed) in try r.string() }) { self.user = user }
      if let goneLists = try table.row("goneLists", { r throws(Malformed) in try r.strings() }) { self.goneLists = goneLists }
      if let unconfirmed = try table.row("unconfirmed", { r throws(Malformed) in try r.strings() }) { self.unconfirmed = unconfirmed }
    } catch {
      return nil
    }
  }
}
