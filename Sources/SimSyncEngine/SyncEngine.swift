import Foundation

/// The error of a failed save or delete, as `CKError`: a code, and for a conflict the
/// server's version of the record.
public struct SyncError: Error, Hashable, Sendable, CustomStringConvertible {
  /// CloudKit's error codes that the simulated server answers with (`CKError.Code`).
  public enum Code: String, Hashable, Sendable, CaseIterable {
    case serverRecordChanged, zoneBusy, requestRateLimited, serviceUnavailable, quotaExceeded, referenceViolation, unknownItem
    case zoneNotFound, userDeletedZone, batchRequestFailed, limitExceeded, serverRejectedRequest, networkFailure
  }
  /// What went wrong.
  public var code: Code
  /// For `serverRecordChanged`: the record as the server has it.
  public var serverRecord: SyncRecord?
  /// How long to wait before trying again, when the server says (`retryAfterSeconds`).
  public var retryAfterSeconds: Double?

  /// An error with `code`.
  public init(_ code: Code, serverRecord: SyncRecord? = nil, retryAfterSeconds: Double? = nil) {
    self.code = code
    self.serverRecord = serverRecord
    self.retryAfterSeconds = retryAfterSeconds
  }

  public static func == (a: SyncError, b: SyncError) -> Bool {
    a.code == b.code && a.retryAfterSeconds == b.retryAfterSeconds && a.serverRecord?.recordID == b.serverRecord?.recordID
  }
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }
  /// `serverRecordChanged`.
  public var description: String { code.rawValue }
}

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
}

/// A sync engine shaped like `CKSyncEngine`, run by the simulator on a simulated device: it
/// fetches and sends changes on the device's schedule, and calls the app's delegate.
public final class SyncEngine: @unchecked Sendable {
  /// How an engine is made (`CKSyncEngine.Configuration`).
  public struct Configuration: Sendable {
    /// The database it syncs (the device's private database).
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
  /// The app's delegate, held weakly as `CKSyncEngine` holds it: the app keeps it alive.
  weak var delegate: (any SyncEngineDelegate)?
  let runner = InlineRunner()

  /// An engine for `configuration` (`CKSyncEngine(_:)`).
  public init(_ configuration: Configuration) {
    state = State(configuration.stateSerialization)
    database = configuration.database
    delegate = configuration.delegate
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
    do { try runner.run { await delegate.handleEvent(event, syncEngine: self) } } catch { throw .suspended }
  }

  /// Asks the delegate for the next batch and waits for it.
  func nextBatch(_ context: SendChangesContext) throws(DelegateFailure) -> RecordZoneChangeBatch? {
    guard let delegate else { throw .released }
    do { return try runner.run { await delegate.nextRecordZoneChangeBatch(context, syncEngine: self) } ?? nil } catch { throw .suspended }
  }
}

/// A device's private database, as the engine reaches it (`CKDatabase`).
public struct SyncDatabase: Hashable, Sendable {
  /// The device it belongs to (its index in the run).
  public var device: Int
  /// The device's database.
  public init(device: Int) { self.device = device }
}

extension SyncEngine {
  /// Why and what the engine is about to send (`CKSyncEngine.SendChangesContext`).
  public struct SendChangesContext: Sendable {
    /// Why the engine sends: on its own schedule, or because the app asked.
    public enum Reason: Sendable, Hashable { case scheduled, manual }
    /// Why.
    public var reason: Reason
    /// What to send (`CKSyncEngine.SendChangesOptions`).
    public var options: SendChangesOptions

    /// A context.
    public init(reason: Reason, options: SendChangesOptions = SendChangesOptions()) {
      self.reason = reason
      self.options = options
    }
  }

  /// What a send covers (`CKSyncEngine.SendChangesOptions`).
  public struct SendChangesOptions: Sendable {
    /// The changes a send covers (`CKSyncEngine.SendChangesOptions.Scope`).
    public enum Scope: Sendable, Hashable {
      /// Every pending change.
      case all
      /// The changes in these zones.
      case zoneIDs([SyncRecordZoneID])
      /// The changes in every zone but these.
      case excludedZoneIDs([SyncRecordZoneID])
      /// The changes of these records.
      case recordIDs([SyncRecordID])

      /// Whether the scope covers a record.
      public func contains(_ recordID: SyncRecordID) -> Bool {
        switch self {
        case .all: true
        case .zoneIDs(let zones): zones.contains(recordID.zoneID)
        case .excludedZoneIDs(let zones): !zones.contains(recordID.zoneID)
        case .recordIDs(let ids): ids.contains(recordID)
        }
      }

      /// Whether the scope covers a pending change (`scope.contains(change)`, as in Apple's
      /// sample delegates).
      public func contains(_ change: PendingRecordZoneChange) -> Bool { contains(change.recordID) }

      /// Whether the scope covers any record of a zone.
      public func contains(_ zoneID: SyncRecordZoneID) -> Bool {
        switch self {
        case .all: true
        case .zoneIDs(let zones): zones.contains(zoneID)
        case .excludedZoneIDs(let zones): !zones.contains(zoneID)
        case .recordIDs(let ids): ids.contains { $0.zoneID == zoneID }
        }
      }
    }
    /// The changes to send.
    public var scope: Scope

    /// Options (the scope: all pending changes unless given).
    public init(scope: Scope = .all) { self.scope = scope }
  }

  /// One request's worth of changes (`CKSyncEngine.RecordZoneChangeBatch`): records to save and
  /// records to delete.
  public struct RecordZoneChangeBatch: Sendable {
    /// The records to save, with their current fields.
    public var recordsToSave: [SyncRecord]
    /// The records to delete.
    public var recordIDsToDelete: [SyncRecordID]
    /// Whether the whole batch fails when one change fails (in an atomic zone).
    public var atomicByZone: Bool
    /// Pending saves whose record the provider no longer had: the engine drops them from its
    /// state, as CKSyncEngine does when the provider returns nil.
    var skipped: [SyncRecordID] = []

    /// A batch of exactly these changes.
    public init(recordsToSave: [SyncRecord], recordIDsToDelete: [SyncRecordID], atomicByZone: Bool = false) {
      self.recordsToSave = recordsToSave
      self.recordIDsToDelete = recordIDsToDelete
      self.atomicByZone = atomicByZone
    }

    /// A batch of the first `pendingChanges` that fit in one request, asking `recordProvider`
    /// for each record to save (return nil for one that no longer exists: the change is
    /// skipped), as `CKSyncEngine.RecordZoneChangeBatch(pendingChanges:recordProvider:)`.
    /// Nil when nothing is left.
    public init?(
      pendingChanges: [PendingRecordZoneChange], maxCount: Int = 400, recordProvider: (SyncRecordID) async -> SyncRecord?
    ) async {
      var saves: [SyncRecord] = []
      var deletes: [SyncRecordID] = []
      var skippedIDs: [SyncRecordID] = []
      for change in pendingChanges where saves.count + deletes.count < maxCount {
        switch change {
        case .saveRecord(let id):
          if let record = await recordProvider(id) { saves.append(record) } else { skippedIDs.append(id) }
        case .deleteRecord(let id):
          deletes.append(id)
        }
      }
      guard !saves.isEmpty || !deletes.isEmpty || !skippedIDs.isEmpty else { return nil }
      self.init(recordsToSave: saves, recordIDsToDelete: deletes)
      skipped = skippedIDs
    }
  }

  /// What the engine tells the delegate (`CKSyncEngine.Event`).
  public enum Event: Sendable, CustomStringConvertible {
    /// The state changed: persist `stateSerialization` now, or lose it with the app.
    case stateUpdate(StateUpdate)
    /// The iCloud account signed in, out, or switched.
    case accountChange(AccountChange)
    /// Zones were deleted on the server (by the user, another device, or a reset).
    case fetchedDatabaseChanges(FetchedDatabaseChanges)
    /// Records changed or deleted on the server: apply them.
    case fetchedRecordZoneChanges(FetchedRecordZoneChanges)
    /// A batch was sent: what was saved and deleted, and what failed with which error.
    case sentRecordZoneChanges(SentRecordZoneChanges)
    /// A fetch is about to start.
    case willFetchChanges
    /// A fetch finished.
    case didFetchChanges
    /// Sending is about to start.
    case willSendChanges(SendChangesContext)
    /// Sending finished.
    case didSendChanges(SendChangesContext)

    /// The event's name, as the trace shows it (`fetchedRecordZoneChanges`).
    public var description: String {
      switch self {
      case .stateUpdate: "stateUpdate"
      case .accountChange: "accountChange"
      case .fetchedDatabaseChanges: "fetchedDatabaseChanges"
      case .fetchedRecordZoneChanges: "fetchedRecordZoneChanges"
      case .sentRecordZoneChanges: "sentRecordZoneChanges"
      case .willFetchChanges: "willFetchChanges"
      case .didFetchChanges: "didFetchChanges"
      case .willSendChanges: "willSendChanges"
      case .didSendChanges: "didSendChanges"
      }
    }

    /// `CKSyncEngine.Event.StateUpdate`.
    public struct StateUpdate: Sendable {
      /// The state to persist.
      public var stateSerialization: State.Serialization
    }

    /// `CKSyncEngine.Event.AccountChange`.
    public struct AccountChange: Sendable, Hashable {
      /// What happened to the account.
      public enum ChangeType: Sendable, Hashable {
        case signIn(currentUser: String)
        case signOut(previousUser: String)
        case switchAccounts(previousUser: String, currentUser: String)
      }
      /// What happened.
      public var changeType: ChangeType
    }

    /// `CKSyncEngine.Event.FetchedDatabaseChanges`: zones deleted on the server.
    public struct FetchedDatabaseChanges: Sendable {
      /// Why a zone went.
      public enum Reason: Sendable, Hashable { case deleted, purged, encryptedDataReset }
      /// The zones deleted, with why.
      public var deletions: [(zoneID: SyncRecordZoneID, reason: Reason)]
    }

    /// `CKSyncEngine.Event.FetchedRecordZoneChanges`.
    public struct FetchedRecordZoneChanges: Sendable {
      /// One record deleted on the server.
      public struct Deletion: Sendable, Hashable {
        /// The record deleted.
        public var recordID: SyncRecordID
        /// Its type.
        public var recordType: String
      }
      /// One record saved on the server (`CKDatabase.RecordZoneChange.Modification`).
      public struct Modification: Sendable {
        /// The record as the server has it now (with its change tag).
        public var record: SyncRecord
      }
      /// Records saved on the server.
      public var modifications: [Modification]
      /// Records deleted on the server.
      public var deletions: [Deletion]
    }

    /// `CKSyncEngine.Event.SentRecordZoneChanges`.
    public struct SentRecordZoneChanges: Sendable {
      /// A save that failed, with the record as sent and the error.
      public struct FailedRecordSave: Sendable {
        /// The record as sent.
        public var record: SyncRecord
        /// Why the save failed.
        public var error: SyncError
      }
      /// Records saved, as the server now has them (new change tags).
      public var savedRecords: [SyncRecord]
      /// Saves that failed.
      public var failedRecordSaves: [FailedRecordSave]
      /// Records deleted.
      public var deletedRecordIDs: [SyncRecordID]
      /// Deletes that failed, with their errors.
      public var failedRecordDeletes: [(recordID: SyncRecordID, error: SyncError)]
    }
  }
}
