import Foundation

/// The error of a failed save, delete or zone change, as `CKError`: a code, and for a conflict
/// the server's version of the record.
///
///     case .serverRecordChanged:
///       if let server = failure.error.serverRecord { merge(server) }
public struct SyncError: Error, Hashable, Sendable, CustomStringConvertible {
  /// CloudKit's error codes that the simulated engine and server answer with (`CKError.Code`,
  /// <https://developer.apple.com/documentation/cloudkit/ckerror/code>).
  public enum Code: String, Hashable, Sendable, CaseIterable {
    /// The record changed on the server since the change tag the save carried.
    case serverRecordChanged
    /// The server is too busy for the zone's operation: the engine tries again.
    case zoneBusy
    /// Requests come too fast: the engine tries again after the retry-after.
    case requestRateLimited
    /// CloudKit is unavailable for a while: the engine tries again after the retry-after.
    case serviceUnavailable
    /// The user's iCloud storage is full.
    case quotaExceeded
    /// The target of a reference does not exist.
    case referenceViolation
    /// The record does not exist on the server (deleted meanwhile).
    case unknownItem
    /// The zone does not exist (never saved, or deleted).
    case zoneNotFound
    /// The user deleted the zone in Settings.
    case userDeletedZone
    /// In an atomic zone, another change of the batch failed, so this one was not made.
    case batchRequestFailed
    /// The request is over CloudKit's limits (records or bytes a request).
    case limitExceeded
    /// CloudKit refused the request for good.
    case serverRejectedRequest
    /// The network is up but CloudKit could not be reached (a request or its answer was lost):
    /// the engine tries again.
    case networkFailure
    /// The device has no network: the engine waits for it.
    case networkUnavailable
    /// No iCloud account is signed in: the engine waits for one.
    case notAuthenticated
    /// The operation was cancelled (`cancelOperations()`, a sign-out).
    case operationCancelled
    /// The user may not save or fetch this data.
    case permissionFailure
    /// The account is signed in but not ready (waiting for the user to confirm it): the engine
    /// waits.
    case accountTemporarilyUnavailable
    /// The server applied the change, but the answer was lost.
    case serverResponseLost
    /// An asset's file was not there when the save read it ("the system can't find the specified
    /// asset"): the app deleted it, or never had it (a `SyncAsset` of a staging file the system
    /// purged). Left to the delegate: sending the same record again cannot help until the file
    /// is there.
    case assetFileNotFound
    /// An asset's file changed while the save was uploading it. Left to the delegate: add the
    /// change again, and the next save reads the file as it is then.
    case assetFileModified

    /// Whether `CKSyncEngine` handles the error itself — keeps the change pending and tries
    /// again when conditions allow — rather than leaving it to the delegate. Apple lists
    /// exactly these: `notAuthenticated`, `accountTemporarilyUnavailable`, `networkFailure`,
    /// `networkUnavailable`, `requestRateLimited`, `serviceUnavailable`, `zoneBusy`
    /// (<https://developer.apple.com/documentation/cloudkit/cksyncengine-5sie5>, "Error
    /// Handling"). The delegate still hears of them, "for your awareness".
    public var isRetriedByTheEngine: Bool {
      switch self {
      case .notAuthenticated, .accountTemporarilyUnavailable, .networkFailure, .networkUnavailable, .requestRateLimited, .serviceUnavailable,
        .zoneBusy:
        true
      default: false
      }
    }
  }
  /// What went wrong.
  public var code: Code
  /// For `serverRecordChanged`: the record as the server has it (merge into this one and save it
  /// again: it carries the current change tag).
  public var serverRecord: SyncRecord?
  /// For `serverRecordChanged`: the record as the device sent it.
  public var clientRecord: SyncRecord?
  /// How long to wait before trying again, when the server says (`retryAfterSeconds`).
  public var retryAfterSeconds: Double?

  /// An error with `code`.
  public init(_ code: Code, serverRecord: SyncRecord? = nil, clientRecord: SyncRecord? = nil, retryAfterSeconds: Double? = nil) {
    self.code = code
    self.serverRecord = serverRecord
    self.clientRecord = clientRecord
    self.retryAfterSeconds = retryAfterSeconds
  }

  public static func == (a: SyncError, b: SyncError) -> Bool {
    a.code == b.code && a.retryAfterSeconds == b.retryAfterSeconds && a.serverRecord?.recordID == b.serverRecord?.recordID
  }
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }
  /// `serverRecordChanged`.
  public var description: String { code.rawValue }
}

/// Errors by the record or zone they are about, as `CKSyncEngine` reports failed deletes
/// (`[CKRecord.ID: CKError]`): look one up by its id, or go through them in the order the server
/// answered — a fixed order, where a `Dictionary` would give another in every process.
///
///     for (recordID, error) in sent.failedRecordDeletes { … }
///     if let error = sent.failedRecordDeletes[recordID] { … }
public struct SyncErrors<ID: Hashable & Sendable>: Sequence, Sendable, ExpressibleByDictionaryLiteral {
  /// The ids and their errors, in order.
  public private(set) var pairs: [(key: ID, value: SyncError)]

  /// The errors of `pairs`, in that order (a later error for an id already there replaces it).
  public init(_ pairs: [(ID, SyncError)]) {
    self.pairs = []
    for (id, error) in pairs {
      if let i = self.pairs.firstIndex(where: { $0.key == id }) { self.pairs[i].value = error } else { self.pairs.append((id, error)) }
    }
  }

  /// Errors written as a dictionary literal, in the order written.
  public init(dictionaryLiteral elements: (ID, SyncError)...) { self.init(elements) }

  /// The error for `id`, or nil.
  public subscript(id: ID) -> SyncError? { pairs.first { $0.key == id }?.value }
  /// The ids, in order.
  public var keys: [ID] { pairs.map(\.key) }
  /// The errors, in order.
  public var values: [SyncError] { pairs.map(\.value) }
  /// How many.
  public var count: Int { pairs.count }
  /// Whether there are none.
  public var isEmpty: Bool { pairs.isEmpty }
  /// The pairs, in order.
  public func makeIterator() -> IndexingIterator<[(key: ID, value: SyncError)]> { pairs.makeIterator() }
}
