@_spi(Kernel) import Simulator

/// One record change a device uploads.
public struct RecordWrite: Hashable, Sendable {
  /// The device's whole local copy (the server takes what the save policy says from it).
  public var record: RecordState
  /// The fields this device changed since its base version.
  public var changed: FieldMask
  /// Whether this is a delete rather than a save; the copy then carries the delete intent in
  /// ``RecordState/deletedBy``.
  public var isDelete: Bool
  /// The change tag of the server version the device based the change on.
  public var baseTag: Int64
  /// For a user's app: the named zone the record is saved in (a number the run gives each zone
  /// name, from 1); 0 for the built-in engine, whose records live in the world's one zone.
  public var zone: Int32 = 0
  /// For a user's app: whether its batch is atomic by zone (one failed change fails the others
  /// with `batchRequestFailed`), as the batch says; nil: as the server's `zone atomic` says.
  public var atomic: Bool? = nil

  /// A write as a device sends it (for testing a policy's `serverSave` and `serverDelete`
  /// directly).
  public init(record: RecordState, changed: FieldMask, isDelete: Bool, baseTag: Int64) {
    self.record = record
    self.changed = changed
    self.isDelete = isDelete
    self.baseTag = baseTag
  }
}

/// A user's app's change to its database's zones (`CKSyncEngine.PendingDatabaseChange`), as it
/// crosses the network: a zone (by the number the run gives its name) to save or to delete.
package struct ZoneChange: Hashable, Sendable {
  /// The zone's number in the run (from 1).
  package var zone: Int32
  /// Whether the zone is deleted rather than saved.
  package var isDelete: Bool
  package init(zone: Int32, isDelete: Bool) {
    self.zone = zone
    self.isDelete = isDelete
  }
}

/// The server's answer to one zone change.
package enum ZoneChangeResult: Hashable, Sendable {
  /// Saved (or there already), or deleted (or not there).
  case done
  /// A CloudKit error for this zone change, with its retry-after.
  case failed(CloudKitError, retryAfter: SimDuration?)
}

/// The server's answer for one write.
package enum WriteResult: Hashable, Sendable {
  /// Stored; the server's resulting record (which may not be what was sent, if it lost).
  case saved(RecordState)
  /// `if-unchanged` and the server has a newer version: merge with it and save again.
  case conflict(server: RecordState)
  /// The record is deleted on the server and the save was refused.
  case refusedDeleted(RecordState)
  /// The delete was applied (or there was nothing to delete).
  case deleted
  /// The record's type is not CloudKit-safe or not deployed; the upload is rejected for good.
  case rejected(typeName: String)
  /// A CloudKit error for this record (a partial failure), with the retry-after it carries.
  case failed(CloudKitError, retryAfter: SimDuration?)

  /// Whether the write did not go through (anything but saved or deleted).
  package var isFailure: Bool {
    switch self {
    case .saved, .deleted: false
    case .conflict, .refusedDeleted, .rejected, .failed: true
    }
  }
}

/// The kind of a message (also the number of its arrowhead marker in pictures).
package enum MessageKind: Int, CaseIterable, Hashable, Sendable {
  case push = 1
  case pushReply, fetch, fetchReply, notify, zones, zonesReply

  package var name: String {
    switch self {
    case .push: "push"
    case .pushReply: "push-reply"
    case .fetch: "fetch"
    case .fetchReply: "fetch-reply"
    case .notify: "notify"
    case .zones: "zones"
    case .zonesReply: "zones-reply"
    }
  }
}

extension WriteResult {
  /// What the server did, without the records.
  package var outcome: WriteOutcome {
    switch self {
    case .saved: .saved
    case .conflict: .conflict
    case .refusedDeleted: .refused
    case .deleted: .deleted
    case .rejected: .rejected
    case .failed: .failed
    }
  }
}

/// What the server did with one write.
package enum WriteOutcome: String, Hashable, Sendable {
  case saved, conflict, refused, deleted, rejected, failed
}

/// What crosses the network.
package enum Message: Hashable, Sendable {
  /// `zone`: the zone epoch the device knows (how many zone deletions it has reacted to).
  case push(requestID: UInt64, writes: [RecordWrite], zone: Int32)
  case pushReply(requestID: UInt64, results: [WriteResult])
  /// `token == nil`: fetch everything (a first sync, or after "token expired").
  case fetch(requestID: UInt64, token: Int64?, zone: Int32)
  /// A fetch of the account's shared database (the shares it takes part in), from `token`.
  case fetchShared(requestID: UInt64, token: Int64?)
  case fetchReply(requestID: UInt64, reply: FetchReply)
  /// A push notification: something changed on the server.
  case notify
  /// A user's app's zone saves and deletes (`modifyRecordZones`); `zone` as for a push.
  case zones(requestID: UInt64, changes: [ZoneChange], zone: Int32)
  /// The answer to each zone change, in order.
  case zonesReply(requestID: UInt64, results: [ZoneChangeResult])

  package var name: StaticString {
    switch self {
    case .push: "push"
    case .pushReply: "push-reply"
    case .fetch: "fetch"
    case .fetchShared: "fetch-shared"
    case .fetchReply: "fetch-reply"
    case .notify: "notify"
    case .zones: "zones"
    case .zonesReply: "zones-reply"
    }
  }

  package var kind: MessageKind {
    switch self {
    case .push: .push
    case .pushReply: .pushReply
    case .fetch, .fetchShared: .fetch
    case .fetchReply: .fetchReply
    case .notify: .notify
    case .zones: .zones
    case .zonesReply: .zonesReply
    }
  }

  /// The request id a request or reply carries (nil for a notification).
  package var requestID: UInt64? {
    switch self {
    case .push(let id, _, _), .pushReply(let id, _), .fetch(let id, _, _), .fetchReply(let id, _), .zones(let id, _, _), .zonesReply(let id, _),
      .fetchShared(let id, _):
      id
    case .notify: nil
    }
  }

  /// The kind's number, as the trace hash encodes it.
  package var code: Int64 {
    switch self {
    case .push: 1
    case .pushReply: 2
    case .fetch: 3
    case .fetchReply: 4
    case .notify: 5
    case .zones: 6
    case .zonesReply: 7
    case .fetchShared: 8
    }
  }

  /// Records carried, for statistics.
  package var recordCount: Int {
    switch self {
    case .push(_, let w, _): return w.count
    case .pushReply(_, let r): return r.count
    case .fetchReply(_, let r):
      if case .changes(let records, _, _) = r { return records.count }
      if case .shared(let records, _, _, _, _, _) = r { return records.count }
      return 0
    default: return 0
    }
  }
}

/// The answer to a fetch.
package enum FetchReply: Hashable, Sendable {
  /// Records changed since the token (deleted ones carry their deletion), the token to fetch
  /// from next, and whether more pages follow.
  case changes(records: [RecordState], newToken: Int64, moreComing: Bool)
  /// The token is older than the retained change log: fetch everything again.
  case tokenExpired
  /// The request was refused (throttled), with the retry-after.
  case failed(CloudKitError, retryAfter: SimDuration?)
  /// The zone was deleted since the device's zone epoch, for this reason; `epoch` is the
  /// server's (the device acknowledges it in its next requests).
  case zoneDeleted(ZoneDeletionReason, epoch: Int32)
  /// A page of the shared database: the records of shares the account may see that changed since
  /// the token, and the records whose access ended since (the shared zone is gone for it).
  /// `readOnly`: those of `records` the account may only read; `gone`: records the account may
  /// see that are no longer in the owner's zone (deleted with it, leaving no tombstone).
  indirect case shared(records: [RecordState], revoked: [RecordKey], readOnly: [RecordKey], gone: [RecordKey], newToken: Int64, moreComing: Bool)
}
