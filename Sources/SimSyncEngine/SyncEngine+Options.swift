import Foundation

extension SyncEngine {
  /// Why the engine syncs (`CKSyncEngine.SyncReason`): on its own schedule, or because the app
  /// asked (`sendChanges()`, `fetchChanges()`, a scenario's `send` or `fetch`).
  public enum SyncReason: Sendable, Hashable {
    /// The engine's own schedule.
    case scheduled
    /// The app asked.
    case manual
  }

  /// Why and what the engine is about to send (`CKSyncEngine.SendChangesContext`).
  public struct SendChangesContext: Sendable {
    /// Why the engine sends (the same as ``SyncEngine/SyncReason``).
    public typealias Reason = SyncReason
    /// Why.
    public var reason: SyncReason
    /// What to send (`CKSyncEngine.SendChangesOptions`).
    public var options: SendChangesOptions

    /// A context.
    public init(reason: SyncReason, options: SendChangesOptions = SendChangesOptions()) {
      self.reason = reason
      self.options = options
    }
  }

  /// Why and what the engine is about to fetch (`CKSyncEngine.FetchChangesContext`).
  public struct FetchChangesContext: Sendable {
    /// Why.
    public var reason: SyncReason
    /// What to fetch.
    public var options: FetchChangesOptions

    /// A context.
    public init(reason: SyncReason, options: FetchChangesOptions = FetchChangesOptions()) {
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
      /// The changes in every zone but these.
      case allExcluding([SyncRecordZoneID])
      /// The changes in these zones.
      case zoneIDs([SyncRecordZoneID])
      /// The changes of these records.
      case recordIDs([SyncRecordID])

      /// Whether the scope covers a record.
      public func contains(_ recordID: SyncRecordID) -> Bool {
        switch self {
        case .all: true
        case .zoneIDs(let zones): zones.contains(recordID.zoneID)
        case .allExcluding(let zones): !zones.contains(recordID.zoneID)
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
        case .allExcluding(let zones): !zones.contains(zoneID)
        case .recordIDs(let ids): ids.contains { $0.zoneID == zoneID }
        }
      }

      /// Whether the scope covers a pending zone change (zone changes are sent with any scope
      /// that covers their zone).
      public func contains(_ change: PendingDatabaseChange) -> Bool { contains(change.zoneID) }
    }
    /// The changes to send.
    public var scope: Scope

    /// Options (the scope: all pending changes unless given).
    public init(scope: Scope = .all) { self.scope = scope }
  }

  /// What a fetch covers (`CKSyncEngine.FetchChangesOptions`).
  public struct FetchChangesOptions: Sendable {
    /// The zones a fetch covers (`CKSyncEngine.FetchChangesOptions.Scope`).
    public enum Scope: Sendable, Hashable {
      /// Every zone.
      case all
      /// Every zone but these.
      case allExcluding([SyncRecordZoneID])
      /// These zones.
      case zoneIDs([SyncRecordZoneID])

      /// Whether the scope covers a zone.
      public func contains(_ zoneID: SyncRecordZoneID) -> Bool {
        switch self {
        case .all: true
        case .allExcluding(let zones): !zones.contains(zoneID)
        case .zoneIDs(let zones): zones.contains(zoneID)
        }
      }
    }
    /// The zones to fetch.
    public var scope: Scope
    /// Zones whose changes come first (the simulated server keeps one change list for all of an
    /// app's zones, so this orders nothing; kept so that code setting it compiles).
    public var prioritizedZoneIDs: [SyncRecordZoneID] = []

    /// Options (every zone unless given).
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
    /// Whether the batch was built by ``init(pendingChanges:maxCount:recordProvider:)``, whose
    /// atomicity Apple does not document: the scenario's `zone atomic` decides it.
    var builtFromPendingChanges = false

    /// A batch of exactly these changes.
    public init(recordsToSave: [SyncRecord] = [], recordIDsToDelete: [SyncRecordID] = [], atomicByZone: Bool = false) {
      self.recordsToSave = recordsToSave
      self.recordIDsToDelete = recordIDsToDelete
      self.atomicByZone = atomicByZone
    }

    /// A batch of the first `pendingChanges` that fit in one request, asking `recordProvider`
    /// for each record to save, as `CKSyncEngine.RecordZoneChangeBatch(pendingChanges:recordProvider:)`.
    /// A save whose record the provider returns nil for is skipped and stays pending (remove it
    /// from the state yourself if the record is gone, as Apple's sample does). Nil when nothing
    /// is left to send.
    public init?(
      pendingChanges: [PendingRecordZoneChange], maxCount: Int = 400, recordProvider: (SyncRecordID) async -> SyncRecord?
    ) async {
      var saves: [SyncRecord] = []
      var deletes: [SyncRecordID] = []
      for change in pendingChanges where saves.count + deletes.count < maxCount {
        switch change {
        case .saveRecord(let id):
          if let record = await recordProvider(id) { saves.append(record) }
        case .deleteRecord(let id):
          deletes.append(id)
        }
      }
      guard !saves.isEmpty || !deletes.isEmpty else { return nil }
      self.init(recordsToSave: saves, recordIDsToDelete: deletes)
      builtFromPendingChanges = true
    }
  }
}
