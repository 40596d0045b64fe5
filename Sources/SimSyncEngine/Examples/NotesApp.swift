import Foundation

/// The reference app: a notes app written on the `SimSyncEngine` API as one writes it on
/// `CKSyncEngine`, whose delegate handles every event correctly. Rows live in memory and are
/// written to the device's disk by the row, as a database writes them (a keyed store,
/// ``SimDisk/table(_:)``: each row changed, and each part of the bookkeeping and the engine's
/// last state that changed), after every change and every event; a fetched record is merged under the fields edited here and not yet saved; a save
/// refused for a changed server record is merged and sent again; a record the server no longer
/// has was deleted by another device, and the delete wins; transient errors are left to the engine, which retries them. Each field carries a version (a
/// Lamport counter and the device, stored in the record as `FIELD@v`), so that merges keep the
/// last write in causal order — an app without it overwrites a newer value with its own retried
/// one after a lost answer (`serverResponseLost`), which the fuzzer finds.
///
/// Any record type and fields go: the app stores what it is given. It is the subject of
/// `docs/your-engine.md`, and the base of the planted-bug apps beside it, each of which gets
/// one thing wrong.
///
/// Text fields (``textFields``, and any field the user appends to) are merged, not replaced:
/// each keeps the pieces of text written into it (a create's or set's text, each append), each
/// with its version, stored in the record as `FIELD@p`; what it shows is the pieces in version
/// order. Two devices' appends made at once are both kept (the union of the pieces), and a set
/// removes the pieces it replaced (their versions, `FIELD@r`), so that a merge does not bring
/// them back.
///
///     expectNoViolations(app: NotesApp.self, scenario: "app-conflicting-edits")
public class NotesApp: SimApp, SyncEngineDelegate, @unchecked Sendable {
  /// A field's version: a Lamport counter and the device that wrote it (ties broken by name).
  /// A write made after this device saw another's has a higher counter, so the last writer in
  /// causal order wins; concurrent writes are ordered by counter, then device.
  struct Version: Codable, Hashable, Comparable {
    var counter: Int64
    var device: String
    static func < (a: Version, b: Version) -> Bool { (a.counter, a.device) < (b.counter, b.device) }
    /// Stored in the record beside the field, as `title@v` = `"17@phone"`.
    var text: String { "\(counter)@\(device)" }
    init(counter: Int64, device: String) {
      self.counter = counter
      self.device = device
    }
    init?(_ value: SyncValue?) {
      guard case .string(let s) = value, let at = s.firstIndex(of: "@"), let n = Int64(s[..<at]) else { return nil }
      counter = n
      device = String(s[s.index(after: at)...])
    }
    static let none = Version(counter: 0, device: "")

    func write(to w: inout CompactWriter) {
      w.int(counter)
      w.string(device)
    }
    init(from r: inout CompactReader) throws(CompactReader.Malformed) {
      counter = try r.int()
      device = try r.string()
    }
  }
  /// The record key that holds `field`'s version.
  static func versionKey(_ field: String) -> String { field + "@v" }
  /// The record key that holds a text field's pieces, and the one that holds those removed.
  static func piecesKey(_ field: String) -> String { field + "@p" }
  static func removedKey(_ field: String) -> String { field + "@r" }
  /// Whether a record key is the app's bookkeeping rather than a field the user sees.
  static func isBookkeeping(_ key: String) -> Bool { key.hasSuffix("@v") || key.hasSuffix("@p") || key.hasSuffix("@r") || key == createdKey }
  /// The record key that holds the version of the record's create: a note deleted and created
  /// again under the same name is another note, and the two are told apart by it.
  static let createdKey = "@created"

  /// Any record types and fields (the app stores what it is given), kept in zone `Records`, under
  /// names that may come back: a note deleted may be made again under its name (the app tells the
  /// two apart by the version of each one's create).
  public class var schema: AppSchema { .anyTypes(recordNames: .reused) }

  /// The fields the app treats as text from the start (a field the user appends to is text too).
  /// A set of one of them removes the text it replaced; a field that is not declared and has
  /// not been appended to yet is replaced whole.
  public class var textFields: Set<String> { ["body"] }

  /// A piece of a text field: what one write put there, with that write's version.
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
      version = try NotesApp.Version(from: &r)
      text = try r.string()
    }
  }

  /// A note as the app keeps it.
  struct Row: Codable, Hashable {
    var recordType: String
    var fields: [String: SyncValue]
    /// Each field's version.
    var versions: [String: Version] = [:]
    /// The fields changed here and not yet saved.
    var dirty: Set<String> = []
    /// The last server version's system fields (its change tag).
    var system: Data?
    /// Per text field, its pieces in version order (the field's value is their text, joined).
    var pieces: [String: [Piece]] = [:]
    /// Per text field, the versions of the pieces a set removed, sorted.
    var removed: [String: [Version]] = [:]
    /// The version of the create that made the note (nil in a row written before it was kept).
    var created: Version?
    /// The note's first save went out and no answer said whether the server took it (the
    /// request timed out, the network went, the answer was lost): it is not sent again until a
    /// fetch says whether the server has it (CloudKit keeps no tombstone: sent again without a
    /// change tag after another device deleted it, it would be a new record, and the note would
    /// come back).
    var unconfirmed = false
    /// A note made again here under the name of one deleted here (the delete acknowledged, or
    /// still pending when the note was made): a fetch may still report a deletion of that one,
    /// which is not of this note. Cleared by the first fetched deletion of the name, or when the
    /// note is saved.
    var expectsEcho = false

    /// Encoded with the set sorted: a `Set` encodes in its iteration order, which differs from
    /// run to run, and the bytes on disk should not.
    func encode(to encoder: any Encoder) throws {
      var c = encoder.container(keyedBy: CodingKeys.self)
      try c.encode(recordType, forKey: .recordType)
      try c.encode(fields, forKey: .fields)
      try c.encode(versions, forKey: .versions)
      try c.encode(dirty.sorted(), forKey: .dirty)
      try c.encodeIfPresent(system, forKey: .system)
      try c.encode(pieces, forKey: .pieces)
      try c.encode(removed, forKey: .removed)
      try c.encodeIfPresent(created, forKey: .created)
      if unconfirmed { try c.encode(true, forKey: .unconfirmed) }
      if expectsEcho { try c.encode(true, forKey: .expectsEcho) }
    }

    /// The row as the app stores it: its fields one after the other, in a compact binary form
    /// (a tenth of `JSONEncoder`'s cost; the set sorted, the dictionaries in key order).
    var stored: Data {
      var w = CompactWriter(reserving: 256)
      w.string(recordType)
      w.values(fields)
      w.dictionary(versions) { $1.write(to: &$0) }
      w.strings(dirty.sorted())
      w.optional(system) { $0.data($1) }
      w.dictionary(pieces) { w, pieces in w.list(pieces) { $1.write(to: &$0) } }
      w.dictionary(removed) { w, versions in w.list(versions) { $1.write(to: &$0) } }
      w.optional(created) { $1.write(to: &$0) }
      // (Only when one is set: the bytes of every other row are as before.)
      if unconfirmed || expectsEcho { w.int((unconfirmed ? 1 : 0) | (expectsEcho ? 2 : 0)) }
      return w.data
    }
  }
  /// What the app writes to disk besides its rows, each part a row of its own in the `meta`
  /// table, written when that part changed (the rows are in the `rows` table, each written
  /// when it changes, as a database writes a changed row).
  struct Saved: Equatable {
    var clock: Int64
    var state: SyncEngine.State.Serialization?
    var hasFetched = false
    var firstFetch: Set<String>?
    var deleted: [String: [Version]]? = nil

    /// Writes the parts that differ from `old` (all of them when there is no `old`) into
    /// `table`: `clock`, `state`, `fetch`, `deleted` (a part that is nil is deleted).
    func write(to table: SimDisk.Table, over old: Saved?) {
      if old?.clock != clock { table.put("clock") { $0.int(clock) } }
      if old == nil || old?.state != state {
        if let state { table.put("state") { $0.state(state) } } else { table.delete("state") }
      }
      if old == nil || old?.hasFetched != hasFetched || old?.firstFetch != firstFetch {
        table.put("fetch") { w in
          w.bool(hasFetched)
          w.optional(firstFetch) { $0.strings($1.sorted()) }  // sorted: a set's order differs from run to run
        }
      }
      if old == nil || old?.deleted != deleted {
        if let deleted {
          table.put("deleted") { $0.dictionary(deleted) { w, versions in w.list(versions) { $1.write(to: &$0) } } }
        } else {
          table.delete("deleted")
        }
      }
    }
  }

  let device: SimDevice
  /// The app's keyed stores on the device's disk: a row per note (by record name), and the
  /// parts of ``Saved``.
  let rowTable: SimDisk.Table
  let metaTable: SimDisk.Table
  var rows: [String: Row] = [:]
  /// What was last written to the `meta` table by this launch.
  var lastSaved: Saved?
  /// Rows changed since the last save.
  var touched: Set<String> = []
  /// The names of the rows whose shown part (type, fields) changed since the simulator last
  /// asked (``shownRecordChanges()``); nil until it first asks.
  var shownChanged: Set<String>?
  /// The Lamport clock: above every version this device has written or seen.
  var clock: Int64 = 0
  /// The engine's state as of its last `stateUpdate`, saved with the rows.
  var state: SyncEngine.State.Serialization?
  /// Whether a fetch ever completed here. The first fetch brings every record the server has
  /// and no deletions: a row it does not bring, that the server once had, was deleted meanwhile.
  var hasFetched = false
  /// During the first fetch: the records it brought (or that were saved meanwhile).
  var firstFetch: Set<String>?
  /// Whether the fetch under way failed (a zone's `didFetchRecordZoneChanges` had an error).
  var fetchFailed = false
  /// What the disk says of the first fetch: ``hasFetched`` and ``firstFetch`` as of the engine
  /// state last stored with them. Written only with that state (a `stateUpdate`, or the state
  /// the app takes with a change): a first fetch that ended after it is one the engine will make
  /// again after a kill, from the token stored — so it must be judged again too, or a row deleted
  /// meanwhile, which a fetch from no token does not report, stays.
  var committed: (hasFetched: Bool, firstFetch: Set<String>?) = (false, nil)
  /// Per name, the versions of the creates of the notes deleted here: a fetched note of that name
  /// and another create is another note (made again elsewhere), not one to keep out; a fetched
  /// copy of a deleted note is kept out of the note made again here.
  var deleted: [String: [Version]] = [:]
  /// The names of notes deleted here whose delete the server acknowledged, until a fetch
  /// reports the deletion (in memory: a kill forgets them).
  var acknowledgedDeletes: Set<String> = []
  var engine: SyncEngine!
  /// The app's sync engine.
  public var syncEngine: SyncEngine { engine }
  /// None: the notes app syncs its private database only (``SharingNotesApp`` shares).
  public var sharedSyncEngine: SyncEngine? { nil }
  /// False: the notes app does not share (``SharingNotesApp`` does).
  public class var sharesRecords: Bool { false }
  /// The engine a record's changes go to: the private database's (an app that shares sends a
  /// shared zone's through its shared engine).
  func engine(for recordID: SyncRecordID) -> SyncEngine { engine }
  /// Whether a row is of a zone another account shares (none here): it is not in the app's own
  /// zone, and a deletion or first fetch of that zone does not touch it.
  func isShared(_ name: String) -> Bool { false }

  /// Launches the app: reads the rows and the engine's state from disk, makes the engine.
  public required init(device: SimDevice) {
    self.device = device
    rowTable = device.disk.table("rows")
    metaTable = device.disk.table("meta")
    for name in rowTable.keys {
      if let data = rowTable.get(name), let row = Row(stored: data) { rows[name] = row }
    }
    if let saved = Saved(from: metaTable) {
      clock = saved.clock
      state = saved.state
      hasFetched = saved.hasFetched
      firstFetch = saved.firstFetch
      committed = (hasFetched, firstFetch)
      deleted = saved.deleted ?? [:]
    }
    engine = SyncEngine(.init(database: device.database, stateSerialization: state, delegate: self))
  }

  /// Asks the engine to save the app's zone, or `zoneID` (when it is gone, or not found): the
  /// server saves no record in a zone the database does not have.
  func saveZone(_ zoneID: SyncRecordZoneID? = nil) {
    engine.state.add(pendingDatabaseChanges: [.saveZone(SyncRecordZone(zoneID: zoneID ?? device.zoneID))])
  }

  /// Sets a row (nil: removes it); the next save writes it.
  func put(_ name: String, _ row: Row?) {
    let old = rows[name]
    guard old != row else { return }  // unchanged: nothing to write
    if shownChanged != nil, old?.recordType != row?.recordType || old?.fields != row?.fields { shownChanged?.insert(name) }
    rows[name] = row
    touched.insert(name)
  }

  /// Writes the changed rows, the clock and the engine's state to disk: each row changed since
  /// the last save, and each part of ``Saved`` that changed — nothing else.
  func save() { save(state: state) }

  func save(state: SyncEngine.State.Serialization?) {
    for name in touched.sorted() {
      if let row = rows[name] { rowTable.put(name, row.stored) } else { rowTable.delete(name) }
    }
    touched = []
    // Written only when it changed: most events change no state (half of a fuzz run's time
    // went to re-encoding the same state).
    let saved = Saved(
      clock: clock, state: state, hasFetched: committed.hasFetched, firstFetch: committed.firstFetch, deleted: deleted.isEmpty ? nil : deleted)
    guard saved != lastSaved else { return }
    saved.write(to: metaTable, over: lastSaved)
    lastSaved = saved
  }

  func id(_ name: String) -> SyncRecordID { SyncRecordID(recordName: name, zoneID: device.zoneID) }

  /// Writes `values` into `row` as this device's newest writes. A text field's new text is its
  /// only piece; the pieces it had are removed.
  func write(_ values: [(field: String, value: SyncValue)], into row: inout Row) {
    clock += 1
    let version = Version(counter: clock, device: device.name)
    for (f, v) in values {
      if isText(f, in: row), case .string(let text) = v {
        let replaced = pieces(of: f, in: row).map(\.version)
        row.removed[f] = Array(Set(row.removed[f] ?? []).union(replaced)).sorted()
        setPieces(text.isEmpty ? [] : [Piece(version: version, text: text)], of: f, in: &row)
      } else {
        row.fields[f] = v
      }
      row.versions[f] = version
      row.dirty.insert(f)
    }
  }

  /// Appends `text` to a text field as this device's newest write.
  func append(_ text: String, to f: String, in row: inout Row) {
    clock += 1
    let version = Version(counter: clock, device: device.name)
    setPieces(pieces(of: f, in: row) + [Piece(version: version, text: text)], of: f, in: &row)
    row.versions[f] = version
    row.dirty.insert(f)
  }

  /// Whether a field of a row is text: declared so, or appended to.
  func isText(_ f: String, in row: Row) -> Bool { Self.textFields.contains(f) || row.pieces[f] != nil }

  /// A text field's pieces: those kept, or its whole value as one piece.
  func pieces(of f: String, in row: Row) -> [Piece] {
    if let pieces = row.pieces[f] { return pieces }
    guard case .string(let text)? = row.fields[f], !text.isEmpty else { return [] }
    return [Piece(version: row.versions[f] ?? .none, text: text)]
  }

  /// Sets a text field's pieces, and its value to their text in version order.
  func setPieces(_ pieces: [Piece], of f: String, in row: inout Row) {
    let sorted = pieces.sorted { $0.version < $1.version }
    row.pieces[f] = sorted
    row.fields[f] = .string(sorted.map(\.text).joined())
  }

  /// A text field of a fetched or refused record, merged into the row: the union of both sides'
  /// pieces, less those either side removed. The field is clean when the server has it all.
  func mergeText(_ f: String, from server: SyncRecord, into row: inout Row) {
    let (theirs, theirRemoved) = serverPieces(f, of: server)
    for piece in theirs { clock = max(clock, piece.version.counter) }
    let ours = pieces(of: f, in: row)
    let removed = theirRemoved.union(row.removed[f] ?? [])
    var all = ours
    for piece in theirs where !ours.contains(where: { $0.version == piece.version }) { all.append(piece) }
    all.removeAll { removed.contains($0.version) }
    let theirShown = Set(theirs.map(\.version)).subtracting(theirRemoved)
    let serverHasAll = Set(all.map(\.version)) == theirShown && removed == theirRemoved
    setPieces(all, of: f, in: &row)
    row.removed[f] = removed.isEmpty ? nil : removed.sorted()
    if let newest = all.last?.version { row.versions[f] = max(row.versions[f] ?? .none, newest) }
    if serverHasAll { row.dirty.remove(f) }
  }

  /// A text field's pieces as a server record holds them, and the versions of those it removed.
  func serverPieces(_ f: String, of server: SyncRecord) -> (pieces: [Piece], removed: Set<Version>) {
    var theirs: [Piece] = []
    if case .strings(let flat)? = server.fields[Self.piecesKey(f)] {
      for i in stride(from: 0, to: flat.count - 1, by: 2) {
        if let version = Version(.string(flat[i])) { theirs.append(Piece(version: version, text: flat[i + 1])) }
      }
    } else if case .string(let text)? = server.fields[f], !text.isEmpty {
      theirs = [Piece(version: Version(server.fields[Self.versionKey(f)]) ?? .none, text: text)]
    }
    var theirRemoved: Set<Version> = []
    if case .strings(let flat)? = server.fields[Self.removedKey(f)] { theirRemoved = Set(flat.compactMap { Version(.string($0)) }) }
    return (theirs, theirRemoved)
  }

  /// Makes the user's change in the store and adds the pending change for it.
  public func perform(_ intent: AppIntent) -> Bool {
    switch intent {
    case .create(let type, let recordID, let values):
      // (Also a note created again under the name of one deleted here: its pending delete is
      // replaced by the save, and it is a new record, with nothing of the old one's.)
      var row = newRow(type, values)
      // (A deletion of the name a fetch reports next may be of the note deleted here — sent, or
      // still pending and now replaced by this save — rather than of this one.)
      row.expectsEcho =
        acknowledgedDeletes.contains(recordID.recordName) || engine(for: recordID).state.pendingRecordZoneChanges.contains(.deleteRecord(recordID))
      put(recordID.recordName, row)
      engine(for: recordID).state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
    case .set(let recordID, let values):
      guard var row = rows[recordID.recordName] else { return false }
      write(values, into: &row)
      put(recordID.recordName, row)
      // (A note whose first save is unknown waits for the fetch: ``confirm(syncEngine:)``.)
      if !row.unconfirmed { engine(for: recordID).state.add(pendingRecordZoneChanges: [.saveRecord(recordID)]) }
    case .delete(let recordID):
      guard let row = rows[recordID.recordName] else { return false }
      if let created = row.created, !(deleted[recordID.recordName] ?? []).contains(created) {
        deleted[recordID.recordName, default: []].append(created)
      }
      put(recordID.recordName, nil)
      engine(for: recordID).state.add(pendingRecordZoneChanges: [.deleteRecord(recordID)])
    case .append(let recordID, let field, let text):
      guard var row = rows[recordID.recordName] else { return false }
      append(text, to: field, in: &row)
      put(recordID.recordName, row)
      if !row.unconfirmed { engine(for: recordID).state.add(pendingRecordZoneChanges: [.saveRecord(recordID)]) }
    case .deleteZone:
      // The user deleted everything: every row goes, and every change not yet sent. (What
      // another account shares stays: it is in its owner's zone.)
      for name in rows.keys.sorted() where !isShared(name) { put(name, nil) }
      engine.state.remove(pendingRecordZoneChanges: engine.state.pendingRecordZoneChanges)
      startOver()
      // (The zone is deleted on the server already; the next notes need it again.)
      saveZone()
    }
    persistState()
    save()
    return true
  }

  /// A new note's row, with its values and the version of its create.
  func newRow(_ type: String, _ values: [(field: String, value: SyncValue)]) -> Row {
    var row = Row(recordType: type, fields: [:])
    write(values, into: &row)
    row.created = Version(counter: clock, device: device.name)
    return row
  }

  /// Keeps the engine's current state with the rows (so that a kill right after a change does
  /// not lose the pending change).
  func persistState() {
    state = engine.state.serialization
    committed = (hasFetched, firstFetch)
  }

  /// The rows, by record name, with the user's fields.
  public func shownRecords() -> [SyncRecord] { rows.keys.sorted().map { shownRecord(rows[$0]!, name: $0) } }

  func shownRecord(_ row: Row, name: String) -> SyncRecord {
    let r = SyncRecord(recordType: row.recordType, recordID: id(name))
    r.fields = row.fields
    return r
  }

  /// The rows whose type or fields changed since the simulator last asked (``put(_:_:)`` notes
  /// them); nil the first time after a launch, when the simulator reads every row.
  public func shownRecordChanges() -> SimShownChanges? {
    guard let changed = shownChanged else {
      shownChanged = []
      return nil
    }
    shownChanged = []
    return SimShownChanges(names: changed.sorted()) { name in rows[name].map { shownRecord($0, name: name) } }
  }

  /// The record to send for a pending save: the last server version's system fields, with the
  /// row's fields and their versions.
  func record(for recordID: SyncRecordID) -> SyncRecord? {
    guard let row = rows[recordID.recordName] else { return nil }
    let r = row.system.flatMap { SyncRecord(systemFields: $0) } ?? SyncRecord(recordType: row.recordType, recordID: recordID)
    // (A field set to nil has a version and no value: the version goes, so that the nil wins.)
    for f in Set(row.fields.keys).union(row.versions.keys).sorted() {
      // An asset taken from a server record whose files CloudKit did not download (fileURL nil)
      // is left out: the server keeps its own, and the next fetch brings the file.
      if case .asset(let asset)? = row.fields[f], asset.fileURL == nil { continue }
      r[f] = row.fields[f]
      r[Self.versionKey(f)] = (row.versions[f] ?? .none).text
    }
    for (f, pieces) in row.pieces.sorted(by: { $0.key < $1.key }) {
      r.fields[Self.piecesKey(f)] = .strings(pieces.flatMap { [$0.version.text, $0.text] })
      if let removed = row.removed[f], !removed.isEmpty { r.fields[Self.removedKey(f)] = .strings(removed.map(\.text)) }
    }
    if let created = row.created { r[Self.createdKey] = created.text }
    return r
  }

  /// Whether this device's value of a field stays over the server's: a field edited here and not
  /// yet saved, or one whose version is newer than the server's.
  func keepsLocal(dirty: Bool, local: Version, server: Version) -> Bool { server < local || (dirty && server == local) }

  /// A fetched version, merged field by field: the newer version of each field wins, so an edit
  /// made here and not yet sent stays unless a later one (in causal order) is on the server. A
  /// record deleted here, whose delete is not sent yet, stays deleted (the fetch may have left
  /// before the delete was made).
  ///
  /// A note deleted and created again under its name is another note (told apart by the version
  /// of its create): the server's replaces the row and its pending changes — unless the row is
  /// a note made again here and not sent yet and the server's is the one deleted here, which
  /// the row's save replaces.
  func merge(_ server: SyncRecord) {
    let name = server.recordID.recordName
    let theirCreate = Version(server.fields[Self.createdKey])
    if let theirs = theirCreate { clock = max(clock, theirs.counter) }
    let engine = engine(for: server.recordID)
    if engine.state.pendingRecordZoneChanges.contains(.deleteRecord(server.recordID)) {
      // Another note of the name (made again elsewhere): the delete here is moot.
      guard let theirs = theirCreate, !(deleted[name] ?? []).contains(theirs) else { return }
      engine.state.remove(pendingRecordZoneChanges: [.deleteRecord(server.recordID)])
    }
    if let theirs = theirCreate, let row = rows[name], let ours = row.created, theirs != ours {
      if row.system == nil, deleted[name]?.contains(theirs) == true { return }
      put(name, nil)
      engine.state.remove(pendingRecordZoneChanges: [.saveRecord(server.recordID)])
    }
    var row = rows[server.recordID.recordName] ?? Row(recordType: server.recordType, fields: [:])
    if row.created == nil { row.created = theirCreate }
    // A field set to nil is not in the record (as with CloudKit), but its version is: the
    // fields to merge are those the record holds and those it has a version of.
    let versioned = server.allKeys().filter { $0.hasSuffix("@v") }.map { String($0.dropLast(2)) }
    let keys = Set(server.allKeys().filter { !Self.isBookkeeping($0) }).union(versioned).sorted()
    for key in keys {
      // (A field called body that holds an asset, in a schema of another app, is no text.)
      let holdsAsset = if case .asset? = server.fields[key] { true } else { false }
      if !holdsAsset && (isText(key, in: row) || server.fields[Self.piecesKey(key)] != nil) {
        mergeText(key, from: server, into: &row)
        continue
      }
      let theirs = Version(server.fields[Self.versionKey(key)]) ?? .none
      clock = max(clock, theirs.counter)
      let ours = row.versions[key] ?? .none
      if keepsLocal(dirty: row.dirty.contains(key), local: ours, server: theirs) { continue }
      // The server record of `serverRecordChanged` carries no asset files (fileURL nil): an
      // asset of the version the row already holds keeps the row's file.
      if case .asset(let asset)? = server.fields[key], asset.fileURL == nil, ours == theirs, case .asset? = row.fields[key] { continue }
      row.fields[key] = kept(server.fields[key])
      row.versions[key] = theirs
      row.dirty.remove(key)
    }
    row.system = server.encodedSystemFields
    row.expectsEcho = false
    put(server.recordID.recordName, row)
  }

  /// A value of a record from the server, as the app keeps it: an asset's file copied out of
  /// the staging area into the app's container at once (Apple, `CKAsset`: "move the data into
  /// your app's container as soon as you fetch it"). An asset without a file — one of the server
  /// record `serverRecordChanged` carries, whose files CloudKit does not download — is kept as it
  /// is: the record sent next leaves it out (``record(for:)``), and the next fetch brings it.
  func kept(_ value: SyncValue?) -> SyncValue? {
    guard case .asset(let asset)? = value, let staged = asset.fileURL else { return value }
    let files = device.files
    let mine = files.containerURL.appendingPathComponent("assets").appendingPathComponent(staged.lastPathComponent)
    if !files.fileExists(at: mine) {
      guard (try? files.copyItem(at: staged, to: mine)) != nil else { return value }
    }
    return .asset(SyncAsset(fileURL: mine))
  }

  /// A save went through: the row is clean, unless it was edited again while the batch was out
  /// (the engine then still has the change pending).
  /// (The save of a note deleted and made again since is not the row's.)
  func saved(_ record: SyncRecord, syncEngine: SyncEngine) {
    guard var row = rows[record.recordID.recordName] else { return }
    if let theirs = Version(record.fields[Self.createdKey]), let ours = row.created, theirs != ours { return }
    firstFetch?.insert(record.recordID.recordName)
    row.system = record.encodedSystemFields
    row.expectsEcho = false
    if !syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(record.recordID)) { row.dirty = [] }
    put(record.recordID.recordName, row)
  }

  /// A save failed: merge with the server's record and send again what is still newer here;
  /// give way to a delete made elsewhere; leave transient errors to the engine.
  func failed(_ failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave, syncEngine: SyncEngine) {
    let recordID = failure.record.recordID
    if var row = rows[recordID.recordName], row.system == nil, Self.leavesTheSaveUnknown(failure.error.code) {
      // A first save whose answer never came: the server may have the note. Sent again as it
      // is (no change tag), it would make the note anew if another device deleted it since; a
      // fetch says first (``confirm(syncEngine:)``). The change stays pending, and the batch
      // skips it meanwhile (``nextRecordZoneChangeBatch``).
      row.unconfirmed = true
      put(recordID.recordName, row)
      syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
      persistState()  // (the row and the engine's state go to disk together)
      return
    }
    switch failure.error.code {
    case .serverRecordChanged:
      if let server = failure.error.serverRecord { merge(server) }
      if let row = rows[recordID.recordName], !row.dirty.isEmpty {
        syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
      }
    case .unknownItem:
      // The server refuses the record because another device deleted it: the delete wins.
      // (Uploading it again without its change tag would make it a new record, as Apple's
      // sample does — the way deleted notes come back in real apps.)
      fetchedDeletion(recordID, syncEngine: syncEngine)
    case .zoneNotFound, .userDeletedZone:
      // The zone is gone (or was never saved): the next fetch says why (`fetchedDatabaseChanges`),
      // and whether the row goes with it or is uploaded again. Until then the change stays; a
      // zone that is not found is saved again (not one the user deleted in Settings: the fetch
      // says what to do then).
      if failure.error.code == .zoneNotFound { saveZone(recordID.zoneID) }
      if rows[recordID.recordName] != nil { syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)]) }
    case .serverRejectedRequest:
      break  // refused for good: nothing to send again
    case .limitExceeded:
      // Refused alone (a batch over the limits is split by the engine): the record is over
      // CloudKit's 1 MB, or an asset over 50 MB. Sending it again cannot help.
      break
    default:
      // The engine retries only what Apple lists (network, throttling, account, zone busy);
      // anything else — full storage, a lost answer, a reference not there yet, a failed atomic
      // batch — is the app's to send again.
      if !failure.error.code.isRetriedByTheEngine, rows[recordID.recordName] != nil {
        syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
      }
    }
  }

  /// Errors after which a save may or may not have been made: the request or its answer was
  /// lost on the way, or the request was cut off while it was out (an account change cancels
  /// what is in flight).
  static func leavesTheSaveUnknown(_ code: SyncError.Code) -> Bool {
    code == .networkFailure || code == .networkUnavailable || code == .serverResponseLost || code == .operationCancelled
  }

  /// After a fetch that completed, the notes whose first save was left unknown are settled: one
  /// the fetch brought was saved (sent again, with its change tag, if something here is still
  /// newer); one it reported deleted is gone already; one it said nothing of never reached the
  /// server, and is sent again.
  func confirm(syncEngine: SyncEngine) {
    var any = false
    for (name, row) in rows.sorted(by: { $0.key < $1.key }) where row.unconfirmed {
      var row = row
      row.unconfirmed = false
      put(name, row)
      // (Taken out and added again: a change the batch skipped is sent again only when one is
      // added, as `CKSyncEngine` schedules a send.)
      let save = SyncEngine.PendingRecordZoneChange.saveRecord(id(name))
      syncEngine.state.remove(pendingRecordZoneChanges: [save])
      if row.system == nil || !row.dirty.isEmpty { syncEngine.state.add(pendingRecordZoneChanges: [save]) }
      any = true
    }
    if any { persistState() }
  }

  /// A delete failed: sent again, unless the record or its zone is gone already, or the engine
  /// retries it itself.
  func failedDelete(_ recordID: SyncRecordID, _ error: SyncError, syncEngine: SyncEngine) {
    switch error.code {
    case .unknownItem, .zoneNotFound, .userDeletedZone, .serverRejectedRequest:
      break
    default:
      if !error.code.isRetriedByTheEngine, rows[recordID.recordName] == nil {
        syncEngine.state.add(pendingRecordZoneChanges: [.deleteRecord(recordID)])
      }
    }
  }

  /// The zone was deleted on the server. Deleted by the user on another device, or purged in
  /// Settings: the rows that were in it go, with their pending changes (a row never uploaded was
  /// not in it: it stays, and is sent to the new zone). After an encrypted-data reset the server
  /// has nothing: every row is uploaded again, whole.
  func zoneDeleted(_ reason: SyncEngine.Event.FetchedDatabaseChanges.Reason, syncEngine: SyncEngine) {
    for (name, row) in rows.sorted(by: { $0.key < $1.key }) where (row.system != nil || reason == .encryptedDataReset) && !isShared(name) {
      let recordID = id(name)
      if reason == .encryptedDataReset {
        var again = row
        again.system = nil
        again.dirty = Set(row.fields.keys)
        put(name, again)
        syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
      } else {
        put(name, nil)
        syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID)])
      }
    }
    // Deletes not sent yet went with the zone.
    syncEngine.state.remove(
      pendingRecordZoneChanges: syncEngine.state.pendingRecordZoneChanges.filter { if case .deleteRecord = $0 { true } else { false } })
    startOver()
    // What is still to send goes to the zone made again.
    saveZone()
  }

  /// The next fetch starts from nothing: it brings every record of the (new) zone.
  func startOver() {
    hasFetched = false
    firstFetch = nil
  }

  /// The iCloud account changed. The rows of the account signed out of are set aside on disk
  /// with the engine's state, unsent changes included, and come back when that account signs in
  /// again; the rows made while signed out go to the account signed into, as new records. (Apple's
  /// sample deletes local data on a sign-out: what was not sent yet is lost.)
  func accountChanged(_ change: SyncEngine.Event.AccountChange) {
    switch change.changeType {
    case .signOut(let previous):
      setAside(for: previous)
    case .switchAccounts(let previous, let current):
      setAside(for: previous)
      signedIn(as: current)
    case .signIn(let current):
      signedIn(as: current)
    }
  }

  /// The disk's tables of `user`'s set-aside data: `account/USER/` and the table's own name.
  static func asideName(_ user: String, _ table: String) -> String { "account/\(user)/" + table }

  /// Moves the rows and the engine's state to the side, under `user`, and starts empty.
  func setAside(for user: String) {
    save()
    // (Rows set aside earlier under the user and not here now stay there; the state replaces
    // the one set aside before.)
    let asideRows = device.disk.table(Self.asideName(user, rowTable.name))
    for name in rowTable.keys {
      if let data = rowTable.get(name) { asideRows.put(name, data) }
      rowTable.delete(name)
    }
    let asideMeta = device.disk.table(Self.asideName(user, metaTable.name))
    asideMeta.removeAll()
    for key in metaTable.keys {
      if let data = metaTable.get(key) { asideMeta.put(key, data) }
      metaTable.delete(key)
    }
    for name in rows.keys.sorted() { shownChanged?.insert(name) }
    rows = [:]
    touched = []
    restartEngine()
  }

  /// Makes a new engine with no state (no pending changes, no change token) and writes that down.
  func restartEngine() {
    state = nil
    lastSaved = nil
    startOver()
    engine = SyncEngine(.init(database: device.database, stateSerialization: nil, delegate: self))
    persistState()
    save()
  }

  /// Signed into `user`: the rows set aside with that account come back, with its engine state;
  /// the rows here (made while signed out) are new records in it, sent whole.
  func signedIn(as user: String) {
    let carried = rows
    var restored: SyncEngine.State.Serialization?
    let asideMeta = device.disk.table(Self.asideName(user, metaTable.name))
    if let saved = Saved(from: asideMeta) {
      restored = saved.state
      clock = max(clock, saved.clock)
      hasFetched = saved.hasFetched
      firstFetch = saved.firstFetch
    }
    asideMeta.removeAll()
    let asideRows = device.disk.table(Self.asideName(user, rowTable.name))
    for name in asideRows.keys {
      if let data = asideRows.get(name), let row = Row(stored: data), carried[name] == nil { put(name, row) }
      asideRows.delete(name)
    }
    engine = SyncEngine(.init(database: device.database, stateSerialization: restored, delegate: self))
    for (name, row) in carried.sorted(by: { $0.key < $1.key }) {
      var again = row
      again.system = nil
      again.dirty = Set(row.fields.keys)
      put(name, again)
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(id(name))])
    }
    persistState()
    save()
  }

  /// A record another device deleted: the row goes, and so does an unsent save of it.
  func fetchedDeletion(_ recordID: SyncRecordID, syncEngine: SyncEngine) {
    put(recordID.recordName, nil)
    syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID)])
  }

  /// Handles the engine's events.
  public func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    switch event {
    case .stateUpdate(let update):
      state = update.stateSerialization
      committed = (hasFetched, firstFetch)
    case .willFetchChanges:
      if !hasFetched && firstFetch == nil { firstFetch = [] }
      fetchFailed = false
    case .didFetchRecordZoneChanges(let done):
      if done.error != nil { fetchFailed = true }
    case .fetchedRecordZoneChanges(let changes):
      for m in changes.modifications {
        firstFetch?.insert(m.record.recordID.recordName)
        merge(m.record)
      }
      for d in changes.deletions {
        acknowledgedDeletes.remove(d.recordID.recordName)
        // The deletion of a note deleted here, reported after the note was made again here: not
        // this one's.
        if var row = rows[d.recordID.recordName], row.expectsEcho, row.system == nil {
          row.expectsEcho = false
          put(d.recordID.recordName, row)
          continue
        }
        // A note whose first save is unknown: the server had it, and it was deleted since.
        if rows[d.recordID.recordName]?.unconfirmed == true {
          fetchedDeletion(d.recordID, syncEngine: syncEngine)
          continue
        }
        // A note made here and never saved is not the record deleted (one deleted before it
        // was created again under its name): the delete is of the earlier one.
        if rows[d.recordID.recordName]?.system == nil, syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(d.recordID)) { continue }
        fetchedDeletion(d.recordID, syncEngine: syncEngine)
      }
    case .didFetchChanges:
      // A fetch that failed brought only part of what the server has: nothing is judged
      // deleted, and the first fetch goes on with the next.
      guard !fetchFailed else { break }
      if let seen = firstFetch {
        for (name, row) in rows.sorted(by: { $0.key < $1.key }) where row.system != nil && !seen.contains(name) && !isShared(name) {
          let id = id(name)
          if !syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(id)) { fetchedDeletion(id, syncEngine: syncEngine) }
        }
      }
      firstFetch = nil
      hasFetched = true
      confirm(syncEngine: syncEngine)
    case .sentRecordZoneChanges(let sent):
      for r in sent.savedRecords { saved(r, syncEngine: syncEngine) }
      for f in sent.failedRecordSaves { failed(f, syncEngine: syncEngine) }
      for (recordID, error) in sent.failedRecordDeletes { failedDelete(recordID, error, syncEngine: syncEngine) }
      for recordID in sent.deletedRecordIDs { acknowledgedDeletes.insert(recordID.recordName) }
    case .fetchedDatabaseChanges(let changes):
      for deletion in changes.deletions where deletion.zoneID == device.zoneID { zoneDeleted(deletion.reason, syncEngine: syncEngine) }
    case .accountChange(let change):
      accountChanged(change)
    default:
      break
    }
    save()
  }

  /// The pending changes, as records from the store.
  public func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
    -> SyncEngine.RecordZoneChangeBatch?
  {
    let changes = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
    return await SyncEngine.RecordZoneChangeBatch(pendingChanges: changes) { recordID in
      // A note whose first save is unknown is skipped, and stays pending (Apple: "If you return
      // nil from the record provider, this will skip to the next pending change").
      if self.rows[recordID.recordName]?.unconfirmed == true { return nil }
      guard let record = self.record(for: recordID) else {
        // A row that is gone: its save is no longer wanted (the engine would keep it pending).
        syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID)])
        return nil
      }
      return record
    }
  }
}

/// Planted bug: a fetched record is applied over the row, pending local edits included — an
/// edit made here and not yet sent is overwritten by the server's older value (`lost-edit`).
public final class NotesAppOverwritingPendingEdits: NotesApp, @unchecked Sendable {
  override func keepsLocal(dirty: Bool, local: Version, server: Version) -> Bool { false }
  /// A text field too: the server's pieces replace the row's, appends not yet sent included.
  override func mergeText(_ f: String, from server: SyncRecord, into row: inout Row) {
    let (theirs, theirRemoved) = serverPieces(f, of: server)
    for piece in theirs { clock = max(clock, piece.version.counter) }
    setPieces(theirs.filter { !theirRemoved.contains($0.version) }, of: f, in: &row)
    row.removed[f] = theirRemoved.isEmpty ? nil : theirRemoved.sorted()
    if let newest = theirs.last?.version { row.versions[f] = newest }
    row.dirty.remove(f)
  }
}

/// Planted bug: the engine's state serialization is never written to disk (neither from
/// `stateUpdate` nor with a change), so a kill forgets the changes not yet sent: the app shows
/// them, no other device ever gets them (`stranded-record`).
public final class NotesAppNotPersistingState: NotesApp, @unchecked Sendable {
  override func save() { save(state: nil) }
}

/// Planted bug: a save refused because the server's record changed (`serverRecordChanged`) is
/// merged but not sent again — the app forgets the failed save, so its edit stays on this
/// device only.
public final class NotesAppForgettingFailedSaves: NotesApp, @unchecked Sendable {
  override func failed(_ failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave, syncEngine: SyncEngine) {
    if failure.error.code == .serverRecordChanged {
      if let server = failure.error.serverRecord { merge(server) }
      return  // and never sends what is still newer here
    }
    super.failed(failure, syncEngine: syncEngine)
  }
}

/// Planted bug: a transient error (`zoneBusy`, `requestRateLimited`, `quotaExceeded`, …) is
/// treated as permanent — the app removes the pending change and marks the row clean, so the
/// change is never sent.
public final class NotesAppGivingUpOnTransientErrors: NotesApp, @unchecked Sendable {
  override func failed(_ failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave, syncEngine: SyncEngine) {
    switch failure.error.code {
    case .serverRecordChanged, .unknownItem, .zoneNotFound, .userDeletedZone:
      super.failed(failure, syncEngine: syncEngine)
    default:
      let recordID = failure.record.recordID
      syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID)])
      if var row = rows[recordID.recordName] {
        row.dirty = []
        put(recordID.recordName, row)
      }
    }
  }
}

/// Planted bug (apple/sample-cloudkit-sync-engine issue #5): when a save goes through, the app
/// marks the row clean and removes its pending save, even when the user edited the row again
/// while the batch was out — that edit is never sent.
public final class NotesAppClearingInFlightEdits: NotesApp, @unchecked Sendable {
  override func saved(_ record: SyncRecord, syncEngine: SyncEngine) {
    syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(record.recordID)])
    guard var row = rows[record.recordID.recordName] else { return }
    row.system = record.encodedSystemFields
    row.dirty = []
    put(record.recordID.recordName, row)
  }
}

/// Planted bug: deleting a row that has a pending save, the app drops the save and sends no
/// delete, taking the pending save for proof that the record never reached the server. An edited
/// record has a pending save too: the server and the other devices keep the note the user
/// deleted (`resurrection`). (`CKSyncEngine.State` coalesces the two into a delete on its own.)
public final class NotesAppCoalescingAwayDeletes: NotesApp, @unchecked Sendable {
  /// Makes the change; a delete of a row with a pending save drops both (the bug).
  public override func perform(_ intent: AppIntent) -> Bool {
    guard case .delete(let recordID) = intent, rows[recordID.recordName] != nil,
      syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(recordID))
    else { return super.perform(intent) }
    put(recordID.recordName, nil)
    syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID)])
    persistState()
    save()
    return true
  }
}

/// Planted bug: a text field is kept as one string, appended to in place and replaced whole by a
/// newer version like any other field — of two devices' appends made at once, the one saved
/// second overwrites the first device's (`lost-edit`). A text field needs its edits merged.
public final class NotesAppKeepingOneDevicesText: NotesApp, @unchecked Sendable {
  override func isText(_ f: String, in row: Row) -> Bool { false }
  override func append(_ text: String, to f: String, in row: inout Row) {
    guard case .string(let old)? = row.fields[f] else { return write([(f, .string(text))], into: &row) }
    write([(f, .string(old + text))], into: &row)
  }
}

/// Planted bug (Apple's sample app does this): on a sign-out or an account switch the app
/// deletes its local data and starts over — the changes it had not sent yet are gone with it
/// (`lost-edit`, `stranded-record`).
public final class NotesAppWipingOnSignOut: NotesApp, @unchecked Sendable {
  override func accountChanged(_ change: SyncEngine.Event.AccountChange) {
    if case .signIn = change.changeType { return }
    for name in rows.keys.sorted() { put(name, nil) }
    restartEngine()
  }
}

/// Planted bug: the notes stay through an account switch and are sent to the account signed
/// into — and a save the new account's database refuses with `unknownItem` (its change tag is
/// of the other account's database) is uploaded again as a new record, as Apple's sample does
/// after `unknownItem`: one account's notes end up in the other's iCloud (`access-leak`).
public final class NotesAppCarryingNotesAcrossAccounts: NotesApp, @unchecked Sendable {
  override func accountChanged(_ change: SyncEngine.Event.AccountChange) {
    guard case .switchAccounts = change.changeType else { return super.accountChanged(change) }
    engine.state.add(pendingRecordZoneChanges: rows.keys.sorted().map { .saveRecord(id($0)) })
    persistState()
  }
  override func failed(_ failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave, syncEngine: SyncEngine) {
    let name = failure.record.recordID.recordName
    guard failure.error.code == .unknownItem, var row = rows[name] else { return super.failed(failure, syncEngine: syncEngine) }
    row.system = nil
    row.dirty = Set(row.fields.keys)
    put(name, row)
    syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(failure.record.recordID)])
  }
}

/// Planted bug: the app ignores `fetchedDatabaseChanges` — when the user deletes the app's data
/// on another device, this one keeps the notes that were in the zone, and sends them to the new
/// zone when it edits them (`resurrection`).
public final class NotesAppIgnoringZoneDeletions: NotesApp, @unchecked Sendable {
  override func zoneDeleted(_ reason: SyncEngine.Event.FetchedDatabaseChanges.Reason, syncEngine: SyncEngine) {}
}

/// Planted bug: a note deleted and created again under the same name while the delete is still
/// pending is coalesced into the delete — the app's outbox keeps one change per record and lets
/// a delete win over a save. The note the user made again is never sent: it stays on this
/// device alone (`stranded-record`), or goes when the delete comes back from the server
/// (`lost-edit`). (`CKSyncEngine.State` replaces the pending delete with the save.)
public final class NotesAppCoalescingReinserts: NotesApp, @unchecked Sendable {
  /// Makes the change; a create of a note whose delete is pending keeps only the delete (the bug).
  public override func perform(_ intent: AppIntent) -> Bool {
    guard case .create(let type, let recordID, let values) = intent,
      syncEngine.state.pendingRecordZoneChanges.contains(.deleteRecord(recordID))
    else { return super.perform(intent) }
    put(recordID.recordName, newRow(type, values))
    persistState()
    save()
    return true
  }
}

/// The reference app and every planted-bug app, by name (what `sim-cli --app` lists).
public var exampleApps: [any SimApp.Type] {
  [
    NotesApp.self, NotesAppOverwritingPendingEdits.self, NotesAppNotPersistingState.self, NotesAppForgettingFailedSaves.self,
    NotesAppGivingUpOnTransientErrors.self, NotesAppClearingInFlightEdits.self, NotesAppCoalescingAwayDeletes.self,
    NotesAppKeepingOneDevicesText.self, NotesAppWipingOnSignOut.self, NotesAppIgnoringZoneDeletions.self, NotesAppCoalescingReinserts.self,
    NotesAppCarryingNotesAcrossAccounts.self,
    RemindersApp.self, RemindersAppNotCascading.self, RemindersAppIgnoringFailedDeletes.self, RemindersAppNotSavingItsZone.self,
    RemindersAppKeepingOneDevicesNotes.self, SharingNotesApp.self, SharingNotesAppKeepingRevokedShares.self,
    SharingNotesAppIgnoringPermissionFailure.self,
  ]
}

extension NotesApp.Row {
  /// A row read back from what ``stored`` wrote; nil for other bytes.
  init?(stored data: Data) {
    var r = CompactReader(data)
    typealias Malformed = CompactReader.Malformed
    do throws(Malformed) {
      recordType = try r.string()
      fields = try r.values()
      versions = try r.dictionary { r throws(Malformed) in try NotesApp.Version(from: &r) }
      dirty = Set(try r.strings())
      system = try r.optional { r throws(Malformed) in try r.data() }
      pieces = try r.dictionary { r throws(Malformed) in try r.list { r throws(Malformed) in try NotesApp.Piece(from: &r) } }
      removed = try r.dictionary { r throws(Malformed) in try r.list { r throws(Malformed) in try NotesApp.Version(from: &r) } }
      created = try r.optional { r throws(Malformed) in try NotesApp.Version(from: &r) }
      let written = !r.atEnd
      let flags = written ? try r.int() : 0
      // (Written only when one is set: anything else is bytes of another kind.)
      guard flags >= 0 && flags <= 3 && (!written || flags != 0) else { return nil }
      unconfirmed = flags & 1 != 0
      expectsEcho = flags & 2 != 0
    } catch {
      return nil
    }
    guard r.atEnd else { return nil }
  }
}

extension NotesApp.Saved {
  /// What `table` holds; nil when it holds nothing (no `clock`) or bytes of another kind.
  init?(from table: SimDisk.Table) {
    typealias Malformed = CompactReader.Malformed
    do throws(Malformed) {
      guard let clock = try table.row("clock", { r throws(Malformed) in try r.int() }) else { return nil }
      self.clock = clock
      if let state = try table.row("state", { r throws(Malformed) in try r.state() }) { self.state = state }
      let fetch = try table.row("fetch") { r throws(Malformed) in
        (try r.bool(), try r.optional { r throws(Malformed) in Set(try r.strings()) })
      }
      if let fetch { (hasFetched, firstFetch) = fetch }
      deleted = try table.row("deleted") { r throws(Malformed) in
        try r.dictionary { r throws(Malformed) in try r.list { r throws(Malformed) in try NotesApp.Version(from: &r) } }
      }
    } catch {
      return nil
    }
  }
}
