import Foundation
import Scenarios
import Testing

@testable import SimSyncEngine

/// `SimDisk`'s keyed stores (`disk.table(name)`), what they charge, and the reference apps that
/// persist by the row on them: what a relaunch finds, what one change writes, and the changes
/// the apps report to the simulator instead of being read whole after every step.
@Suite struct KeyedStoreTests {
  let zone = SyncRecordZoneID(zoneName: "Records")
  func id(_ name: String) -> SyncRecordID { SyncRecordID(recordName: name, zoneID: zone) }
  func device(_ disk: SimDisk) -> SimDevice { SimDevice(name: "iPad", index: 0, disk: disk) }

  @Test func rowsArePutReadAndDeletedByKeyAndListedInKeyOrder() {
    let disk = SimDisk()
    let t = disk.table("notes")
    #expect(t === disk.table("notes"), "one table per name")
    #expect(t.isEmpty && t.keys.isEmpty && disk.tableNames.isEmpty)
    t.put("n2", Data([1, 2, 3]))
    t["n10"] = Data([4])
    t.put("a", Data())
    #expect(t.keys == ["a", "n10", "n2"])
    #expect(t.count == 3)
    #expect(t.get("n2") == Data([1, 2, 3]))
    #expect(t["n10"] == Data([4]))
    #expect(t.get("missing") == nil)
    t.delete("n10")
    t["a"] = nil
    #expect(t.keys == ["n2"])
    t.put("n2", Data([9]))
    #expect(t.get("n2") == Data([9]), "a put replaces the row")
    #expect(disk.tableNames == ["notes"])
    #expect(disk.names.isEmpty, "rows are not files")
    _ = disk.table("empty")
    #expect(disk.tableNames == ["notes"], "a table with no row is not listed")
    t.removeAll()
    #expect(t.isEmpty)
  }

  @Test func writesAreChargedForWhatIsWrittenAndNothingElse() {
    let disk = SimDisk()
    let t = disk.table("rows")
    t.put("n1", Data(count: 100))
    t.put("n2", Data(count: 10))
    t.put("n1", Data(count: 5))
    t.delete("n2")
    t.delete("n2")  // no row: free
    #expect(t.bytesWritten == 115)
    #expect(t.rowsWritten == 3)
    #expect(t.rowsDeleted == 1)
    disk["file"] = Data(count: 1_000)
    disk["file"] = Data(count: 1_000)  // a file is written whole every time
    #expect(disk.bytesWritten == 2_115)
    #expect(disk.writes == 6)
  }

  @Test func aRelaunchFindsTheRowsAndTheStateAndThePlantedBugLosesTheState() throws {
    for type in [NotesApp.self, NotesAppNotPersistingState.self] as [NotesApp.Type] {
      let disk = SimDisk()
      let app = type.init(device: device(disk))
      #expect(app.perform(.create(recordType: "Note", recordID: id("n1"), values: [("title", .string("Groceries")), ("body", .string("milk"))])))
      #expect(app.perform(.create(recordType: "Note", recordID: id("n2"), values: [("title", .string("Books"))])))
      #expect(app.perform(.append(recordID: id("n1"), field: "body", text: " +eggs;")))
      #expect(app.perform(.delete(recordID: id("n2"))))
      #expect(disk.names.isEmpty)
      #expect(disk.tableNames == ["meta", "rows"])
      let again = type.init(device: device(disk))
      #expect(again.rows == app.rows)
      #expect(again.clock == app.clock)
      #expect(again.deleted == app.deleted)
      #expect(again.shownRecords().map(\.description) == app.shownRecords().map(\.description))
      if type == NotesApp.self {
        #expect(again.syncEngine.state.pendingRecordZoneChanges == app.syncEngine.state.pendingRecordZoneChanges)
        #expect(again.syncEngine.state.pendingRecordZoneChanges == [.saveRecord(id("n1")), .deleteRecord(id("n2"))])
      } else {
        #expect(again.syncEngine.state.pendingRecordZoneChanges.isEmpty, "the planted bug never writes the state down")
      }
    }
  }

  @Test func remindersComeBackAfterARelaunch() async throws {
    let disk = SimDisk()
    let reminders = SyncRecordZoneID(zoneName: "Reminders")
    let app = RemindersApp(device: SimDevice(name: "iPad", index: 0, disk: disk, zoneID: reminders))
    let list = SyncRecordID(recordName: "L", zoneID: reminders)
    let item = SyncRecordID(recordName: "R", zoneID: list.zoneID)
    #expect(await app.perform(.create(recordType: "List", recordID: list, values: [("name", .string("Home"))])))
    let ref = SyncValue.reference(SyncRecord.Reference(recordID: list, action: .none))
    #expect(await app.perform(.create(recordType: "Reminder", recordID: item, values: [("list", ref), ("title", .string("Milk"))])))
    #expect(await app.perform(.append(recordID: item, field: "notes", text: " +1;")))
    let again = RemindersApp(device: SimDevice(name: "iPad", index: 0, disk: disk, zoneID: reminders))
    #expect(await again.shownRecords().map(\.description) == app.shownRecords().map(\.description))
    #expect(again.syncEngine.state.pendingRecordZoneChanges == [.saveRecord(list), .saveRecord(item)])
    #expect(disk.tableNames == ["meta", "rows"])
  }

  /// O(change): an edit of one note among many writes that note's row and the bookkeeping that
  /// changed, not the store.
  @Test func anEditWritesOnlyTheRowItChanged() {
    let disk = SimDisk()
    let app = NotesApp(device: device(disk))
    for k in 0..<50 { _ = app.perform(.create(recordType: "Note", recordID: id("n\(k)"), values: [("title", .string("note \(k)"))])) }
    let rows = disk.table("rows")
    let (rowsBefore, bytesBefore) = (rows.rowsWritten, disk.bytesWritten)
    #expect(app.perform(.set(recordID: id("n7"), values: [("title", .string("edited"))])))
    #expect(rows.rowsWritten - rowsBefore == 1)
    let stored = rows.keys.reduce(0) { $0 + (rows.get($1)?.count ?? 0) }
    #expect(disk.bytesWritten - bytesBefore < stored / 10, "\(disk.bytesWritten - bytesBefore) bytes for one edit of a \(stored)-byte store")
  }

  @Test func aRowRoundTripsThroughItsEncoding() throws {
    var row = NotesApp.Row(recordType: "Note", fields: ["title": .string("é"), "n": .int(-3), "d": .double(0.1), "r": .strings(["a", "b"])])
    row.versions = ["title": NotesApp.Version(counter: 7, device: "iPad")]
    row.dirty = ["title", "n"]
    row.system = SyncRecord(recordType: "Note", recordID: id("n1")).encodedSystemFields
    row.pieces = ["body": [NotesApp.Piece(version: NotesApp.Version(counter: 1, device: "mac"), text: "x")]]
    row.removed = ["body": [NotesApp.Version(counter: 0, device: "")]]
    row.created = NotesApp.Version(counter: 1, device: "iPad")
    #expect(NotesApp.Row(stored: row.stored) == row)
    #expect(row.stored == row.stored)
    #expect(NotesApp.Row(stored: Data("garbage".utf8)) == nil)
    #expect(NotesApp.Row(stored: row.stored + Data([0])) == nil)
  }

  @Test func theAppReportsWhatChangedInWhatItShows() {
    let app = NotesApp(device: device(SimDisk()))
    #expect(app.shownRecordChanges()?.removed == nil, "the first call after a launch: read whole")
    _ = app.perform(.create(recordType: "Note", recordID: id("n1"), values: [("title", .string("a"))]))
    _ = app.perform(.create(recordType: "Note", recordID: id("n2"), values: [("title", .string("b"))]))
    #expect(app.shownRecordChanges()?.changed.map(\.recordID.recordName) == ["n1", "n2"])
    #expect(app.shownRecordChanges()?.changed.isEmpty == true)
    _ = app.perform(.delete(recordID: id("n1")))
    let changes = app.shownRecordChanges()
    #expect(changes?.removed == ["n1"])
    #expect(changes?.changed.isEmpty == true)
  }

  /// An app that does not say what changed is read whole only after its code ran: with none of
  /// it run since the last read, the driver keeps what it read (and the run is the same: above).
  @Test func anAppReadWholeIsNotReadAgainWhenNoneOfItsCodeRan() {
    ReadWholeCounting.counts.withLock { $0 = (reads: 0, readsWithNothingRun: 0) }
    let record = Fuzzer.run(seed: 3, shape: WorkloadShape(), app: AppUnderTest(ReadWholeCounting.self)).record
    let counts = ReadWholeCounting.counts.withLock { $0 }
    #expect(record.app != nil)
    #expect(counts.reads > 10, "the app is read whole, after the steps its code ran in")
    #expect(
      counts.readsWithNothingRun == 0,
      "\(counts.readsWithNothingRun) of \(counts.reads) reads came with no code of the app run since the one before")
  }

  /// The delete rules an app carries out itself (`RemindersApp` states its schema: a reminder goes
  /// with its list) are looked for only in a step that changed what the app shows or took in a
  /// copy: the runs are those of a driver that walks every step (seed 6 logs rule intents; 3
  /// seeds of each of two apps that state their schema).
  @Test func lookingForDeleteRulesOnlyWhereSomethingChangedChangesNoRun() {
    for app in [AppUnderTest(RemindersApp.self), AppUnderTest(RemindersAppNotSavingItsZone.self)] {
      for seed: UInt64 in 5...7 {
        let a = Fuzzer.run(seed: seed, shape: WorkloadShape(), app: app).record
        let b = DriverTestSettings.$walksEveryStepForRules.withValue(true) {
          Fuzzer.run(seed: seed, shape: WorkloadShape(), app: app).record
        }
        #expect(a.traceHash == b.traceHash, "\(app.name) seed \(seed)")
        #expect(a.counts == b.counts, "\(app.name) seed \(seed)")
      }
    }
  }

  /// The driver's reading of what changed gives the run an app that is read whole gives: the
  /// same trace, seed for seed (2 seeds in `swift test`, 20 in the nightly run, `SIM_NIGHTLY=1`).
  @Test(arguments: [0, 1])
  func readingOnlyWhatChangedSeesWhatReadingEverythingSees(_ which: Int) {
    let apps =
      which == 0
      ? (AppUnderTest(NotesApp.self), AppUnderTest(NotesAppReadWhole.self))
      : (AppUnderTest(RemindersApp.self), AppUnderTest(RemindersAppReadWhole.self))
    let seeds: ClosedRange<UInt64> = ProcessInfo.processInfo.environment["SIM_NIGHTLY"] == "1" ? 1...20 : 1...2
    for seed in seeds {
      let a = Fuzzer.run(seed: seed, shape: WorkloadShape(), app: apps.0).record
      let b = Fuzzer.run(seed: seed, shape: WorkloadShape(), app: apps.1).record
      #expect(a.traceHash == b.traceHash, "seed \(seed)")
      #expect(a.counts == b.counts, "seed \(seed)")
      #expect(a.app == b.app, "seed \(seed)")
    }
  }
}

/// The reference apps as an app that does not say what changed: read whole after every step.
final class NotesAppReadWhole: NotesApp, @unchecked Sendable {
  override func shownRecordChanges() -> SimShownChanges? { nil }
}

final class RemindersAppReadWhole: RemindersApp, @unchecked Sendable {
  override func shownRecordChanges() async -> SimShownChanges? { nil }
}

/// A reference app read whole, counting its reads and those made with none of its code run
/// since the read before (its launch, an intent, a delegate call).
final class ReadWholeCounting: NotesApp, @unchecked Sendable {
  static let counts = Locked((reads: 0, readsWithNothingRun: 0))
  private var ran = true

  override func shownRecordChanges() -> SimShownChanges? {
    ran = true
    return nil
  }
  override func shownRecords() -> [SyncRecord] {
    Self.counts.withLock {
      $0.reads += 1
      if !ran { $0.readsWithNothingRun += 1 }
    }
    ran = false
    return super.shownRecords()
  }
  override func perform(_ intent: AppIntent) -> Bool {
    ran = true
    return super.perform(intent)
  }
  override func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    ran = true
    await super.handleEvent(event, syncEngine: syncEngine)
  }
  override func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
    -> SyncEngine.RecordZoneChangeBatch?
  {
    ran = true
    return await super.nextRecordZoneChangeBatch(context, syncEngine: syncEngine)
  }
}

/// A value behind a lock (tests run in parallel).
final class Locked<Value>: @unchecked Sendable {
  private var value: Value
  private let lock = NSLock()
  init(_ value: Value) { self.value = value }
  func withLock<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}
