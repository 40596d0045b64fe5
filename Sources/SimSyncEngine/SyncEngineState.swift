import Foundation

/// A record zone, as `CKRecordZone`: its identity.
public struct SyncRecordZone: Hashable, Sendable, Codable {
  /// The zone's identity.
  public var zoneID: SyncRecordZoneID
  /// The zone called `zoneID`.
  public init(zoneID: SyncRecordZoneID) { self.zoneID = zoneID }
  /// The current user's zone called `zoneName`.
  public init(zoneName: String) { self.init(zoneID: SyncRecordZoneID(zoneName: zoneName)) }
}

extension SyncEngine {
  /// A change to a record the engine has yet to send (`CKSyncEngine.PendingRecordZoneChange`).
  public enum PendingRecordZoneChange: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Save the record (the delegate provides its current fields when a batch is built).
    case saveRecord(SyncRecordID)
    /// Delete the record.
    case deleteRecord(SyncRecordID)

    /// The record the change is about.
    public var recordID: SyncRecordID {
      switch self {
      case .saveRecord(let id), .deleteRecord(let id): id
      }
    }

    /// `save n1 (Notes)`, `delete n1 (Notes)`.
    public var description: String {
      switch self {
      case .saveRecord(let id): "save \(id)"
      case .deleteRecord(let id): "delete \(id)"
      }
    }
  }

  /// A change to a zone the engine has yet to send (`CKSyncEngine.PendingDatabaseChange`).
  public enum PendingDatabaseChange: Hashable, Sendable, Codable {
    /// Create (or save) the zone.
    case saveZone(SyncRecordZone)
    /// Delete the zone and everything in it.
    case deleteZone(SyncRecordZoneID)

    /// The zone the change is about.
    public var zoneID: SyncRecordZoneID {
      switch self {
      case .saveZone(let zone): zone.zoneID
      case .deleteZone(let id): id
      }
    }
  }

  /// What the engine must remember across launches (`CKSyncEngine.State`): the changes not
  /// yet sent, and where fetching left off. The app persists ``Serialization`` on every
  /// `stateUpdate` event and hands it back when it makes the engine after a relaunch; what it
  /// does not persist is lost when the app is killed.
  ///
  /// Adding changes coalesces them per record as `CKSyncEngine.State` does: a save added after
  /// a pending delete of the same record replaces the delete, and a delete added after a
  /// pending save replaces the save; adding a change already pending does nothing.
  public final class State: @unchecked Sendable {
    /// The state as the app stores it (`CKSyncEngine.State.Serialization`): opaque, `Codable`,
    /// and encoded deterministically (sorted keys).
    public struct Serialization: Hashable, Sendable, Codable {
      var pendingRecordZoneChanges: [PendingRecordZoneChange]
      var pendingDatabaseChanges: [PendingDatabaseChange]
      /// The server change token of the zone fetched so far (nil: fetch everything).
      var changeToken: Int64?
      var hasPendingUntrackedChanges: Bool
    }

    /// Record changes not yet sent (or sent and not yet acknowledged), in the order added.
    @exclusivity(unchecked) public private(set) var pendingRecordZoneChanges: [PendingRecordZoneChange] = [] {
      didSet { recordChangesVersion &+= 1 }
    }
    /// Counts the changes to ``pendingRecordZoneChanges`` (the runtime reads the list again only
    /// when it moved).
    @exclusivity(unchecked) private(set) var recordChangesVersion: UInt64 = 0
    /// Zone changes not yet sent, in the order added.
    @exclusivity(unchecked) public private(set) var pendingDatabaseChanges: [PendingDatabaseChange] = []
    /// Set by the app when it has changes it has not told the engine about (its own outbox);
    /// the engine then asks for a batch even with nothing pending.
    public var hasPendingUntrackedChanges = false {
      didSet { if hasPendingUntrackedChanges != oldValue { onChange?() } }
    }
    /// Where fetching left off (the runtime's; opaque to the app).
    @exclusivity(unchecked) var changeToken: Int64?
    /// Called after every change, so that the runtime posts a `stateUpdate` event.
    @exclusivity(unchecked) var onChange: (@Sendable () -> Void)?
    /// How many times each change was added: a change added again while its batch was out
    /// stays pending when that batch is acknowledged (the later edit is still to send).
    @exclusivity(unchecked) var additions: [PendingRecordZoneChange: Int] = [:]

    init(_ serialization: Serialization?) {
      if let serialization {
        pendingRecordZoneChanges = serialization.pendingRecordZoneChanges
        pendingDatabaseChanges = serialization.pendingDatabaseChanges
        changeToken = serialization.changeToken
        hasPendingUntrackedChanges = serialization.hasPendingUntrackedChanges
      }
    }

    /// The state as the app should store it.
    public var serialization: Serialization {
      Serialization(
        pendingRecordZoneChanges: pendingRecordZoneChanges, pendingDatabaseChanges: pendingDatabaseChanges, changeToken: changeToken,
        hasPendingUntrackedChanges: hasPendingUntrackedChanges)
    }

    /// Adds changes to send, coalescing each with what is pending for its record.
    public func add(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
      var changed = false
      for change in changes {
        additions[change, default: 0] += 1
        if pendingRecordZoneChanges.contains(change) { continue }
        // The opposite change to the same record is discarded: the later one is what to send.
        pendingRecordZoneChanges.removeAll { $0.recordID == change.recordID }
        pendingRecordZoneChanges.append(change)
        changed = true
      }
      if changed { onChange?() }
    }

    /// Removes `change` once sent, unless it was added again since `additions` (when its batch
    /// was built).
    func acknowledge(_ change: PendingRecordZoneChange, additionsThen: Int) {
      guard (additions[change] ?? 0) == additionsThen else { return }
      remove(pendingRecordZoneChanges: [change])
    }

    /// Removes changes the app no longer wants sent (exact matches only).
    public func remove(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
      let before = pendingRecordZoneChanges.count
      pendingRecordZoneChanges.removeAll { changes.contains($0) }
      if pendingRecordZoneChanges.count != before { onChange?() }
    }

    /// Adds zone changes to send, coalescing per zone as record changes are.
    public func add(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
      var changed = false
      for change in changes {
        if pendingDatabaseChanges.contains(change) { continue }
        pendingDatabaseChanges.removeAll { $0.zoneID == change.zoneID }
        pendingDatabaseChanges.append(change)
        changed = true
      }
      if changed { onChange?() }
    }

    /// Clears the pending changes and where fetching left off, as `CKSyncEngine` does when the
    /// iCloud account changes.
    func reset() {
      let had = !pendingRecordZoneChanges.isEmpty || !pendingDatabaseChanges.isEmpty || changeToken != nil || hasPendingUntrackedChanges
      pendingRecordZoneChanges = []
      pendingDatabaseChanges = []
      changeToken = nil
      hasPendingUntrackedChanges = false
      additions = [:]
      if had { onChange?() }
    }

    /// Removes zone changes the app no longer wants sent.
    public func remove(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
      let before = pendingDatabaseChanges.count
      pendingDatabaseChanges.removeAll { changes.contains($0) }
      if pendingDatabaseChanges.count != before { onChange?() }
    }
  }
}
