import Foundation

/// The delegate through which the engine asks the app for records and tells it what happened
/// (`CKSyncEngineDelegate`). Its methods are `async`, as CloudKit's are; the simulator runs
/// each call to completion before anything else happens (nothing else interleaves with it).
public protocol SyncEngineDelegate: AnyObject, Sendable {
  /// Handles one event: a state to persist, fetched changes to apply, sent changes to clear
  /// or retry, an account change.
  func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async
  /// The next batch of changes to send, built from `syncEngine.state`'s pending changes;
  /// nil when there is nothing to send.
  func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch?
  /// The options of the next fetch request (called before each request of a fetch); by
  /// default the context's.
  func nextFetchChangesOptions(_ context: SyncEngine.FetchChangesContext, syncEngine: SyncEngine) async -> SyncEngine.FetchChangesOptions
}

extension SyncEngineDelegate {
  /// The context's options, as `CKSyncEngineDelegate`'s default does.
  public func nextFetchChangesOptions(_ context: SyncEngine.FetchChangesContext, syncEngine: SyncEngine) async -> SyncEngine.FetchChangesOptions {
    context.options
  }
}

/// A sync engine shaped like `CKSyncEngine`, run by the simulator on a simulated device: it
/// fetches and sends changes on the device's schedule, and calls the app's delegate.
public final class SyncEngine: @unchecked Sendable {
  /// How an engine is made (`CKSyncEngine.Configuration`).
  public struct Configuration: Sendable {
    /// The database it syncs: the device's private database, or its shared one (one engine per
    /// database, as Apple advises for `CKSyncEngine`).
    public var database: SyncDatabase
    /// The state the app saved from the last `stateUpdate` event, or nil on first launch.
    public var stateSerialization: State.Serialization?
    /// The app's delegate.
    public var delegate: any SyncEngineDelegate
    /// Whether the engine syncs on its own schedule (true, as by default in CloudKit).
    public var automaticallySync = true

    /// A configuration.
    public init(database: SyncDatabase, stateSerialization: State.Serialization?, delegate: any SyncEngineDelegate) {
      self.database = database
      self.stateSerialization = stateSerialization
      self.delegate = delegate
    }
  }

  /// The engine's state: the changes to send, and where fetching left off.
  public let state: State
  /// The database it syncs.
  public let database: SyncDatabase
  /// Whether the engine syncs on its own schedule (the configuration's). When false it sends
  /// and fetches only when asked: `sendChanges()`, `fetchChanges()`, a scenario's `sync`,
  /// `send` or `fetch`.
  public let automaticallySync: Bool
  /// The app's delegate, held weakly as `CKSyncEngine` holds it: the app keeps it alive.
  weak var delegate: (any SyncEngineDelegate)?
  let runner = InlineRunner()

  /// An engine for `configuration` (`CKSyncEngine(_:)`).
  public init(_ configuration: Configuration) {
    state = State(configuration.stateSerialization)
    database = configuration.database
    delegate = configuration.delegate
    automaticallySync = configuration.automaticallySync
    if let link = database.link {
      if database.databaseScope == .shared {
        state.onChange = { link.sharedStateChanged = true }
      } else {
        state.onChange = { link.stateChanged = true }
      }
    }
  }

  /// Sends the pending changes now, bypassing the engine's schedule (`CKSyncEngine.sendChanges(_:)`).
  ///
  /// In the simulator the call returns once the send is under way, not when it has finished
  /// (no simulated time passes inside a call into the app's code); what it sent and what
  /// failed reach the delegate as events, as always. It throws `networkUnavailable` on a device
  /// with no network and `notAuthenticated` with no account signed in. Awaiting it inside
  /// `handleEvent` or `nextRecordZoneChangeBatch` stops the run: `CKSyncEngine` deadlocks there
  /// (Apple: "you should not await a call into fetchChanges(_:) or sendChanges(_:) from within
  /// the handleEvent callback").
  public func sendChanges(_ options: SendChangesOptions = SendChangesOptions()) async throws {
    guard let link = database.link else { return }
    try link.check("sendChanges()")
    link.requests.append((.send(options), database.databaseScope))
  }

  /// Fetches changes now, bypassing the engine's schedule (`CKSyncEngine.fetchChanges(_:)`); as
  /// ``sendChanges(_:)``, it returns once the fetch is under way. The simulated server keeps one
  /// change list for all of an app's zones: a fetch scoped to some zones fetches all of them.
  public func fetchChanges(_ options: FetchChangesOptions = FetchChangesOptions()) async throws {
    guard let link = database.link else { return }
    try link.check("fetchChanges()")
    link.requests.append((.fetch(options), database.databaseScope))
  }

  /// Cancels the sends and fetches under way or asked for (`CKSyncEngine.cancelOperations()`):
  /// a request in flight is abandoned (the server may still have applied it), and its changes
  /// stay pending.
  public func cancelOperations() async {
    guard let link = database.link else { return }
    link.requests = []
    link.cancelRequested = true
  }

  /// Why a delegate call could not be made or finished (the run is then not judged).
  struct DelegateFailure: Error, Equatable, CustomStringConvertible {
    var description: String

    /// The call waited on something the simulator does not run.
    static let suspended = DelegateFailure(description: InlineRunner.Suspended().description)
    /// Nothing kept the delegate alive.
    static let released = DelegateFailure(
      description:
        "the engine's delegate was released: the engine holds its delegate weakly, as CKSyncEngine does, so the app must keep a strong reference to it"
    )
  }

  /// Calls the delegate's `handleEvent` and waits for it to finish.
  func deliver(_ event: Event) throws(DelegateFailure) {
    guard let delegate else { throw .released }
    try call { await delegate.handleEvent(event, syncEngine: self) }
  }

  /// Asks the delegate for the next batch and waits for it.
  func nextBatch(_ context: SendChangesContext) throws(DelegateFailure) -> RecordZoneChangeBatch? {
    guard let delegate else { throw .released }
    return try call { await delegate.nextRecordZoneChangeBatch(context, syncEngine: self) } ?? nil
  }

  /// Asks the delegate for the options of the next fetch request.
  func nextFetchOptions(_ context: FetchChangesContext) throws(DelegateFailure) -> FetchChangesOptions {
    guard let delegate else { throw .released }
    return try call { await delegate.nextFetchChangesOptions(context, syncEngine: self) }
  }

  /// Runs one delegate call to its end, noting while the call runs that the delegate is being
  /// called (a task the call starts runs after it, not inside it).
  func call<T: Sendable>(_ body: @escaping @Sendable () async -> T) throws(DelegateFailure) -> T {
    let link = database.link
    link?.delegateCalls &+= 1
    do {
      return try runner.run(delegateCall: true) {
        link?.inDelegateCall = true
        let result = await body()
        link?.inDelegateCall = false
        return result
      }
    } catch {
      link?.inDelegateCall = false
      throw .suspended
    }
  }
}

/// A device's database, as the engine reaches it (`CKDatabase`): its private database, or its
/// shared one — the other accounts' zones shared with this device's account.
public struct SyncDatabase: Hashable, Sendable {
  /// Which database (`CKDatabase.Scope`). There is no public database: `CKSyncEngine` cannot sync
  /// one.
  public enum Scope: Hashable, Sendable, CustomStringConvertible {
    /// The account's own records (`CKContainer.privateCloudDatabase`).
    case `private`
    /// Other accounts' zones shared with this account and accepted
    /// (`CKContainer.sharedCloudDatabase`): their records, in zones whose `ownerName` is the
    /// owner's.
    case shared

    /// `private`, `shared`.
    public var description: String { self == .private ? "private" : "shared" }
  }
  /// The device it belongs to (its index in the run).
  public var device: Int
  /// Which of the device's databases (`CKDatabase.databaseScope`).
  public var databaseScope: Scope
  /// What ties the database to the simulated device (nil for one made in a test).
  let link: DeviceLink?
  /// The device's database of `scope` (its private one by default).
  public init(device: Int, scope: Scope = .private) { self.init(device: device, scope: scope, link: nil) }
  init(device: Int, scope: Scope = .private, link: DeviceLink?) {
    self.device = device
    self.databaseScope = scope
    self.link = link
  }
  public static func == (a: SyncDatabase, b: SyncDatabase) -> Bool { a.device == b.device && a.databaseScope == b.databaseScope }
  public func hash(into hasher: inout Hasher) {
    hasher.combine(device)
    hasher.combine(databaseScope)
  }
}

extension SyncDatabase {
  /// The names CloudKit gives a fetched zone change (`CKDatabase.DatabaseChange`), so that a
  /// port's `CKDatabase.DatabaseChange.Deletion` renames to this one.
  public enum DatabaseChange {
    /// A zone saved on the server.
    public typealias Modification = SyncEngine.Event.FetchedDatabaseChanges.Modification
    /// A zone deleted on the server, with why.
    public typealias Deletion = SyncEngine.Event.FetchedDatabaseChanges.Deletion
  }

  /// The names CloudKit gives a fetched record change (`CKDatabase.RecordZoneChange`).
  public enum RecordZoneChange {
    /// A record saved on the server.
    public typealias Modification = SyncEngine.Event.FetchedRecordZoneChanges.Modification
    /// A record deleted on the server.
    public typealias Deletion = SyncEngine.Event.FetchedRecordZoneChanges.Deletion
  }
}

extension DeviceLink {
  /// Throws what `CKSyncEngine` answers a send or fetch with when it cannot reach the server;
  /// notes a call from inside a delegate call, where `CKSyncEngine` deadlocks.
  func check(_ call: String) throws {
    if inDelegateCall {
      misuse =
        misuse
        ?? "the delegate awaited \(call) inside a delegate callback, where CKSyncEngine deadlocks: it waits for the event being handled (Apple, CKSyncEngineDelegate.handleEvent: \"you should not await a call into fetchChanges(_:) or sendChanges(_:) from within the handleEvent callback\"; do it in a detached task)"
      throw SyncError(.operationCancelled)
    }
    guard signedIn else { throw SyncError(.notAuthenticated) }
    guard online else { throw SyncError(.networkUnavailable) }
  }
}
