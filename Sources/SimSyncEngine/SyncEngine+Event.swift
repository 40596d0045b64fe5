import Foundation

extension SyncEngine {
  /// What the engine tells the delegate (`CKSyncEngine.Event`,
  /// <https://developer.apple.com/documentation/cloudkit/cksyncengine-5sie5/event>): the same
  /// twelve cases, with the same payloads. Events come one at a time; the next comes only after
  /// the delegate returned from the last.
  ///
  /// A send posts `willSendChanges`, then `sentDatabaseChanges` (zones first), then
  /// `sentRecordZoneChanges` per batch, then `didSendChanges`; a fetch posts `willFetchChanges`,
  /// `fetchedDatabaseChanges` when zones changed, `willFetchRecordZoneChanges`,
  /// `fetchedRecordZoneChanges` per page, `didFetchRecordZoneChanges`, then `didFetchChanges` —
  /// the order of the class overview (<https://developer.apple.com/documentation/cloudkit/cksyncengine-5sie5>).
  public enum Event: Sendable, CustomStringConvertible {
    /// The state changed: persist `stateSerialization` now, or lose it with the app.
    case stateUpdate(StateUpdate)
    /// The iCloud account signed in, out, or switched.
    case accountChange(AccountChange)
    /// Zones were saved or deleted on the server (by the user, another device, or a reset).
    case fetchedDatabaseChanges(FetchedDatabaseChanges)
    /// Records changed or deleted on the server: apply them.
    case fetchedRecordZoneChanges(FetchedRecordZoneChanges)
    /// Zone saves and deletes were sent: which went through, which failed with which error.
    case sentDatabaseChanges(SentDatabaseChanges)
    /// A batch was sent: what was saved and deleted, and what failed with which error.
    case sentRecordZoneChanges(SentRecordZoneChanges)
    /// A fetch is about to start.
    case willFetchChanges(WillFetchChanges)
    /// The records of a zone are about to be fetched.
    case willFetchRecordZoneChanges(WillFetchRecordZoneChanges)
    /// The records of a zone were fetched (or the fetch failed with `error`).
    case didFetchRecordZoneChanges(DidFetchRecordZoneChanges)
    /// A fetch finished.
    case didFetchChanges(DidFetchChanges)
    /// Sending is about to start.
    case willSendChanges(WillSendChanges)
    /// Sending finished.
    case didSendChanges(DidSendChanges)

    /// The event's name, as the trace shows it (`fetchedRecordZoneChanges`).
    public var description: String {
      switch self {
      case .stateUpdate: "stateUpdate"
      case .accountChange: "accountChange"
      case .fetchedDatabaseChanges: "fetchedDatabaseChanges"
      case .fetchedRecordZoneChanges: "fetchedRecordZoneChanges"
      case .sentDatabaseChanges: "sentDatabaseChanges"
      case .sentRecordZoneChanges: "sentRecordZoneChanges"
      case .willFetchChanges: "willFetchChanges"
      case .willFetchRecordZoneChanges: "willFetchRecordZoneChanges"
      case .didFetchRecordZoneChanges: "didFetchRecordZoneChanges"
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
      /// What happened to the account (users are named by their record name, where CloudKit
      /// gives a `CKRecord.ID`).
      public enum ChangeType: Sendable, Hashable {
        /// Signed into `currentUser`.
        case signIn(currentUser: String)
        /// Signed out of `previousUser`.
        case signOut(previousUser: String)
        /// Switched from one account to another.
        case switchAccounts(previousUser: String, currentUser: String)
      }
      /// What happened.
      public var changeType: ChangeType
    }

    /// `CKSyncEngine.Event.FetchedDatabaseChanges`: zones saved or deleted on the server.
    public struct FetchedDatabaseChanges: Sendable {
      /// A zone saved on the server (`CKDatabase.DatabaseChange.Modification`).
      public struct Modification: Sendable, Hashable {
        /// The zone.
        public var zoneID: SyncRecordZoneID
      }
      /// A zone deleted on the server (`CKDatabase.DatabaseChange.Deletion`).
      public struct Deletion: Sendable, Hashable {
        /// Why a zone went (`CKDatabase.DatabaseChange.Deletion.Reason`).
        public enum Reason: Sendable, Hashable {
          /// An app deleted it (the user's "delete all data", on this or another device).
          case deleted
          /// The user deleted the app's data in Settings: delete the local copies, send nothing
          /// of them again.
          case purged
          /// The user reset their encrypted data: upload what is kept locally again.
          case encryptedDataReset
        }
        /// The zone.
        public var zoneID: SyncRecordZoneID
        /// Why it went.
        public var reason: Reason
      }
      /// Why a zone went (the same as ``Deletion/Reason``).
      public typealias Reason = Deletion.Reason
      /// Zones saved.
      public var modifications: [Modification] = []
      /// Zones deleted, with why.
      public var deletions: [Deletion] = []
    }

    /// `CKSyncEngine.Event.FetchedRecordZoneChanges`.
    public struct FetchedRecordZoneChanges: Sendable {
      /// One record deleted on the server (`CKDatabase.RecordZoneChange.Deletion`).
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

    /// `CKSyncEngine.Event.SentDatabaseChanges`.
    public struct SentDatabaseChanges: Sendable {
      /// A zone save that failed.
      public struct FailedZoneSave: Sendable {
        /// The zone as sent.
        public var zone: SyncRecordZone
        /// Why the save failed.
        public var error: SyncError
      }
      /// Zones saved.
      public var savedZones: [SyncRecordZone]
      /// Zone saves that failed.
      public var failedZoneSaves: [FailedZoneSave]
      /// Zones deleted.
      public var deletedZoneIDs: [SyncRecordZoneID]
      /// Zone deletes that failed, with their errors.
      public var failedZoneDeletes: SyncErrors<SyncRecordZoneID>
    }

    /// `CKSyncEngine.Event.SentRecordZoneChanges`.
    public struct SentRecordZoneChanges: Sendable {
      /// A save that failed, with the record as sent and the error.
      public struct FailedRecordSave: Sendable {
        /// The record as sent: its type, fields and system fields.
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
      public var failedRecordDeletes: SyncErrors<SyncRecordID>
    }

    /// `CKSyncEngine.Event.WillFetchChanges`.
    public struct WillFetchChanges: Sendable {
      /// Why and what the engine fetches.
      public var context: FetchChangesContext
    }

    /// `CKSyncEngine.Event.WillFetchRecordZoneChanges`.
    public struct WillFetchRecordZoneChanges: Sendable {
      /// The zone whose records the engine is about to fetch.
      public var zoneID: SyncRecordZoneID
    }

    /// `CKSyncEngine.Event.DidFetchRecordZoneChanges`.
    public struct DidFetchRecordZoneChanges: Sendable {
      /// The zone whose records were fetched.
      public var zoneID: SyncRecordZoneID
      /// Why the fetch of the zone failed, if it did.
      public var error: SyncError?
    }

    /// `CKSyncEngine.Event.DidFetchChanges`.
    public struct DidFetchChanges: Sendable {
      /// Why and what the engine fetched.
      public var context: FetchChangesContext
    }

    /// `CKSyncEngine.Event.WillSendChanges`.
    public struct WillSendChanges: Sendable {
      /// Why and what the engine sends.
      public var context: SendChangesContext
    }

    /// `CKSyncEngine.Event.DidSendChanges`.
    public struct DidSendChanges: Sendable {
      /// Why and what the engine sent.
      public var context: SendChangesContext
    }
  }
}
