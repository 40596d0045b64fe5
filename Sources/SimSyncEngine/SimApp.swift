import Foundation
import Scenarios
@_spi(Kernel) import Simulator

/// What survives a kill on a simulated device: what the app wrote here. Memory does not.
///
/// Two ways to store: whole files by name (``subscript(name:)``), which an app rewrites whole
/// to change any part, and keyed stores (``table(_:)``), whose rows are put, read and deleted
/// one by one, as a SQLite table's rows or a file per record would be — so that an app that
/// changes one row writes one row. The disk counts what was written (``bytesWritten``,
/// ``writes``): that is what persisting costs the app. The count is the app's charge only: no
/// simulated time passes for a write.
///
///     let notes = device.disk.table("notes")
///     notes["n1"] = try encoder.encode(row)          // one row written
///     for name in notes.keys { … notes["n1"] … }    // at launch: every row, in key order
public final class SimDisk: @unchecked Sendable {
  @exclusivity(unchecked) var files: [String: Data] = [:]
  @exclusivity(unchecked) var tables: [String: Table] = [:]
  /// An empty disk.
  public init() {}
  /// The names of the files on the disk, sorted.
  public var names: [String] { files.keys.sorted() }
  /// The file called `name`, or nil; setting nil removes it. Setting a file writes it whole
  /// (``bytesWritten`` counts every byte of it).
  public subscript(name: String) -> Data? {
    get { files[name] }
    set {
      files[name] = newValue
      fileBytesWritten &+= newValue?.count ?? 0
      fileWrites &+= 1
      if let meter {
        meter.bytesWritten &+= newValue?.count ?? 0
        meter.writes &+= 1
      }
    }
  }

  @exclusivity(unchecked) var fileBytesWritten = 0
  @exclusivity(unchecked) var fileWrites = 0
  /// Where the disk reports what is written, when a run is measured (`sim-cli bench app`).
  @exclusivity(unchecked) var meter: AppCostMeter?
  /// Bytes written to the disk so far, files and rows (a file is counted whole at every write;
  /// a row, when it is put). Deletes write nothing.
  public var bytesWritten: Int { tables.values.reduce(fileBytesWritten) { $0 &+ $1.bytesWritten } }
  /// Writes so far: files set or removed, rows put or deleted.
  public var writes: Int { tables.values.reduce(fileWrites) { $0 &+ $1.rowsWritten &+ $1.rowsDeleted } }

  /// The keyed store called `name`, made empty on first use and kept on the disk (it survives
  /// kills, as the files do). The same object every time for a name.
  public func table(_ name: String) -> Table {
    if let table = tables[name] { return table }
    let table = Table(name: name)
    table.meter = meter
    tables[name] = table
    return table
  }

  /// The names of the keyed stores that hold at least one row, sorted.
  public var tableNames: [String] { tables.filter { !$0.value.rows.isEmpty }.keys.sorted() }

  /// A keyed store on a ``SimDisk``: rows of bytes by key, put, read and deleted one at a time,
  /// as a SQLite table's rows (or a file per record) would be. Each put is charged for the row's
  /// bytes alone, whatever else the table holds.
  ///
  ///     let rows = device.disk.table("rows")
  ///     rows.put("n1", data)          // or rows["n1"] = data
  ///     rows.get("n1")                // the bytes, or nil
  ///     rows.delete("n1")             // or rows["n1"] = nil
  ///     rows.keys                     // every key, sorted
  public final class Table: @unchecked Sendable {
    /// The table's name on its disk.
    public let name: String
    @exclusivity(unchecked) var rows: [String: Data] = [:]
    @exclusivity(unchecked) var meter: AppCostMeter?

    init(name: String) { self.name = name }

    /// The row under `key`, or nil.
    public func get(_ key: String) -> Data? { rows[key] }

    /// Writes the row under `key` (replacing the one there): charged for `data`'s bytes.
    public func put(_ key: String, _ data: Data) {
      rows[key] = data
      bytesWritten &+= data.count
      rowsWritten &+= 1
      if let meter {
        meter.bytesWritten &+= data.count
        meter.writes &+= 1
      }
    }

    /// Deletes the row under `key`, if there is one (a delete of no row costs nothing).
    public func delete(_ key: String) {
      guard rows.removeValue(forKey: key) != nil else { return }
      rowsDeleted &+= 1
      meter?.writes &+= 1
    }

    /// The row under `key`, or nil; setting puts it, setting nil deletes it.
    public subscript(key: String) -> Data? {
      get { rows[key] }
      set {
        if let newValue { put(key, newValue) } else { delete(key) }
      }
    }

    /// Every key that has a row, sorted.
    public var keys: [String] { rows.keys.sorted() }
    /// How many rows the table holds.
    public var count: Int { rows.count }
    /// Whether the table holds no row.
    public var isEmpty: Bool { rows.isEmpty }

    /// Deletes every row (each counted as a delete).
    public func removeAll() {
      for key in keys { delete(key) }
    }

    /// Bytes put into this table so far.
    @exclusivity(unchecked) public private(set) var bytesWritten = 0
    /// Rows put so far (a row put twice counts twice).
    @exclusivity(unchecked) public private(set) var rowsWritten = 0
    /// Rows deleted so far.
    @exclusivity(unchecked) public private(set) var rowsDeleted = 0
  }
}

/// What the simulator gives an app when it launches on a device.
public final class SimDevice: @unchecked Sendable {
  /// The device's name in the scenario (`iPad`).
  public let name: String
  /// The device's private database, for the app's `SyncEngine`.
  public let database: SyncDatabase
  /// The device's shared database, for the app's second `SyncEngine` (an app that shares makes
  /// one engine per database, as Apple advises: ``SimApp/sharedSyncEngine``): the zones other
  /// accounts share with this device's account.
  public let sharedDatabase: SyncDatabase
  /// The device's disk: what the app stored before it was killed is still there.
  public let disk: SimDisk
  /// The device's files: the app's container and the staging area fetched assets arrive in
  /// (``SyncAsset``). They survive kills, as the disk does.
  public let files: SimFiles
  /// The zone the app keeps its records in (its schema's ``AppSchema/zoneName``; `Records`
  /// unless it says another).
  public let zoneID: SyncRecordZoneID

  /// The device's clock, as the app reads it: a skewed or drifting clock in the scenario reads
  /// wrong here too. Simulated time zero is 2026-01-01 00:00:00 UTC on a perfect clock. Read the
  /// time from here, never from `Date()`: the wall clock differs between runs of one seed.
  public var now: Date { Date(timeIntervalSince1970: Self.epoch + Double(clock.deviceTime.nanoseconds) / 1e9) }
  /// This launch's random generator, drawn from the run's seed, the device and the launch: the
  /// same seed gives the same numbers. Use it instead of `SystemRandomNumberGenerator`, `.random`
  /// without `using:` or `UUID()`.
  ///
  ///     let jitter = Int.random(in: 0..<100, using: &device.random)
  public var random: SimDeviceRandom
  /// Simulated time zero on the wall clock: 2026-01-01 00:00:00 UTC.
  public static let epoch: TimeInterval = 1_767_225_600

  let clock: SimDeviceClock
  /// What ties the device to the simulator (nil for a device made in a test).
  let link: DeviceLink?
  /// Runs ``runToCompletion(_:)`` when no call into the app is under way on this thread (made
  /// on first use).
  lazy var ownRunner = InlineRunner()

  init(
    name: String, index: Int, disk: SimDisk, clock: SimDeviceClock = SimDeviceClock(), random: SimDeviceRandom = SimDeviceRandom(seed: 0),
    zoneID: SyncRecordZoneID = SyncRecordZoneID(zoneName: "Records"), link: DeviceLink? = nil, files: SimFiles? = nil
  ) {
    self.name = name
    self.files = files ?? SimFiles(device: name)
    database = SyncDatabase(device: index, link: link)
    sharedDatabase = SyncDatabase(device: index, scope: .shared, link: link)
    self.disk = disk
    self.clock = clock
    self.random = random
    self.zoneID = zoneID
    self.link = link
  }
}

/// The device clock's reading, kept current by the simulator before it calls the app.
final class SimDeviceClock: @unchecked Sendable {
  var deviceTime = VirtualTime.zero
}

/// A seeded random number generator for an app on a simulated device (xoshiro256**, the
/// simulator's own): deterministic for a seed, a device and a launch.
public struct SimDeviceRandom: RandomNumberGenerator, Sendable {
  var generator: SimRandom
  /// A generator for `seed`, as the simulator makes one per device and launch.
  public init(seed: UInt64) { generator = SimRandom(seed: seed) }
  init(seed: UInt64, device: String, launch: Int) { generator = SimRandom(seed: seed, stream: "app:" + device, index: UInt64(launch)) }
  /// The next 64 random bits.
  public mutating func next() -> UInt64 { generator.next() }
}

/// A user's change, as the simulator asks the app to make it: field values by name.
public enum AppIntent: Sendable {
  /// Create a record of `recordType` with these values. The name may be one the app deleted
  /// before (a scenario that creates an id again after a `delete`): the new record is another,
  /// with nothing of the deleted one's.
  case create(recordType: String, recordID: SyncRecordID, values: [(field: String, value: SyncValue)])
  /// Set fields of a record the app shows.
  case set(recordID: SyncRecordID, values: [(field: String, value: SyncValue)])
  /// Delete a record the app shows.
  case delete(recordID: SyncRecordID)
  /// Add `text` at the end of a text field of a record the app shows (a note's body). Appends
  /// made on two devices at once must both survive: the app merges them, as a text field's
  /// edits are merged, rather than keep one device's whole text. Each append's text is unique
  /// in the run (` +17;`), so the oracle finds who wrote which part of what the app shows.
  case append(recordID: SyncRecordID, field: String, text: String)
  /// The user deletes the app's data in this zone from this device (an app's "delete all
  /// data"): the app deletes every row it keeps there and every pending change, and the zone is
  /// deleted on the server (the simulator does that at once, as the engine would send the
  /// app's `deleteZone`). The account's other devices hear of it at their next fetch, as a
  /// `fetchedDatabaseChanges` event with reason `.deleted`.
  case deleteZone(zoneID: SyncRecordZoneID)
}

/// The user's app, as the simulator runs it on each device: it keeps its own store, makes its
/// own `SyncEngine` with itself (or an object of its own) as the delegate, and says what it
/// shows. Made again after every kill, from what it left on the device's disk.
///
/// `perform` and `shownRecords` may be `async` (an app whose store is an actor awaits it; one
/// that sends at once awaits `syncEngine.sendChanges()`); plain methods satisfy them too. The
/// simulator runs each call to completion before anything else happens.
public protocol SimApp: AnyObject, SendableMetatype {
  /// Launches the app on `device`: reads its disk, makes its sync engine.
  init(device: SimDevice)
  /// The app's sync engine (of the device's private database).
  var syncEngine: SyncEngine { get }
  /// The app's engine of the device's shared database (``SimDevice/sharedDatabase``), for an app
  /// that shares: nil (the default) for one that does not.
  var sharedSyncEngine: SyncEngine? { get }
  /// Whether the app syncs records other accounts share with its user (it makes a
  /// ``sharedSyncEngine``): scenarios with `share` lines, and `fuzz --sharing`, run only such
  /// apps. False by default.
  static var sharesRecords: Bool { get }
  /// Makes the user's change in the app's store and tells the engine about it; false when the
  /// app cannot make it (the record is not there). An app that refuses a change of its own
  /// schema on a record it shows fails the run: the simulator counts every refusal.
  func perform(_ intent: AppIntent) async -> Bool
  /// What the app shows the user: one record per row, with its fields.
  func shownRecords() async -> [SyncRecord]
  /// What changed in what the app shows since the simulator last called this, so that the
  /// simulator need not read every row after every step: the records whose type or fields
  /// changed, as ``shownRecords()`` would give them, and the names of those no longer shown.
  /// Return nil when the app cannot tell (as it does by default, and at its first call after a
  /// launch): the simulator then reads ``shownRecords()`` whole, after every step in which code
  /// of the app ran (what an app shows changes only in its own code; an app whose rows depend on
  /// anything else, the device clock say, must tell). An app that tells must tell every change —
  /// a record missed here is one the simulator thinks unchanged.
  ///
  ///     func shownRecordChanges() -> SimShownChanges? {
  ///       defer { changedSinceAsked = [] }
  ///       guard tracking else { tracking = true; return nil }    // first call: read whole
  ///       return SimShownChanges(names: changedSinceAsked.sorted(), shown: { rows[$0].map(record) })
  ///     }
  func shownRecordChanges() async -> SimShownChanges?
  /// The record types and fields the app stores, its zones, and how it names its records
  /// (``AppSchema/anyTypes(recordNames:zoneName:)`` unless the app says: any types, fresh names).
  static var schema: AppSchema { get }
}

extension SimApp {
  /// Any types, fresh names, zone `Records`: an app that does not state its schema.
  public static var schema: AppSchema { .anyTypes() }
  /// Nil: the app syncs its private database only.
  public var sharedSyncEngine: SyncEngine? { nil }
  /// False: the app does not share.
  public static var sharesRecords: Bool { false }
  /// Nil: the app does not keep track of what changed, and the simulator reads
  /// ``shownRecords()`` whole after every step.
  public func shownRecordChanges() async -> SimShownChanges? { nil }
}

/// What changed in what an app shows since the simulator last asked
/// (``SimApp/shownRecordChanges()``): the records changed, as the app shows them, and the names
/// of those it no longer shows.
public struct SimShownChanges: Sendable {
  /// The records whose type or fields changed (or that are new), as ``SimApp/shownRecords()``
  /// would give them.
  public var changed: [SyncRecord]
  /// The names of the records no longer shown.
  public var removed: [String]

  /// Changes as lists.
  public init(changed: [SyncRecord], removed: [String]) {
    self.changed = changed
    self.removed = removed
  }

  /// The changes to the records called `names`: each that `shown` gives a record for changed,
  /// each it gives nil for removed.
  public init(names: [String], shown: (String) -> SyncRecord?) {
    changed = []
    removed = []
    for name in names {
      if let record = shown(name) { changed.append(record) } else { removed.append(name) }
    }
  }
}

/// What ties an engine the app makes to the device the simulator runs it on: whether it can
/// reach the server, what the app asked of it, and whether the app changed its state.
final class DeviceLink: @unchecked Sendable {
  /// A send or fetch the app asked for (`sendChanges()`, `fetchChanges()`), not yet started.
  enum Request {
    case send(SyncEngine.SendChangesOptions)
    case fetch(SyncEngine.FetchChangesOptions)
  }
  /// Whether the device has a network.
  @exclusivity(unchecked) var online = true
  /// Whether an iCloud account is signed in.
  @exclusivity(unchecked) var signedIn = true
  /// What the app asked for, in order, with the database of the engine asked.
  @exclusivity(unchecked) var requests: [(request: Request, scope: SyncDatabase.Scope)] = []
  /// Whether the app asked to cancel what is under way.
  @exclusivity(unchecked) var cancelRequested = false
  /// Whether the engine is calling the delegate now.
  @exclusivity(unchecked) var inDelegateCall = false
  /// Calls into the delegate so far.
  @exclusivity(unchecked) var delegateCalls = 0
  /// Whether the app (or the engine) changed the engine's state since the last `stateUpdate`.
  @exclusivity(unchecked) var stateChanged = false
  /// The same, for the shared database's engine.
  @exclusivity(unchecked) var sharedStateChanged = false
  /// A call the real engine would deadlock on, in words: the run fails with it.
  @exclusivity(unchecked) var misuse: String?
}
