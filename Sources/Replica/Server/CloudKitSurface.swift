@_spi(Kernel) import Simulator

/// A CloudKit error the simulated server answers with, named as Apple's `CKError.Code` names it
/// (`docs/cloudkit-model.md`). A conflict on a stale change tag (`serverRecordChanged`) is not
/// here: it is its own answer, carrying the server's record.
public enum CloudKitError: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
  /// The zone is busy with other requests; try again after the retry-after.
  case zoneBusy
  /// The client sends requests too fast; try again after the retry-after.
  case requestRateLimited
  /// CloudKit is unavailable for a while; try again after the retry-after.
  case serviceUnavailable
  /// The user's iCloud storage is full: nothing more is saved until space is freed.
  case quotaExceeded
  /// The request is over CloudKit's limits (records or bytes a request): split it.
  case limitExceeded
  /// In an atomic zone, another record of the request failed, so this one was not saved.
  case batchRequestFailed
  /// A reference points at a record that does not exist.
  case referenceViolation
  /// The record is not on the server (its change tag names a version the server does not have).
  case unknownItem
  /// The zone does not exist (deleted by another device, or never created).
  case zoneNotFound
  /// The user deleted the zone (in Settings → iCloud): the data is gone and must not come back.
  case userDeletedZone
  /// The server applied the change but the answer was lost: the client cannot tell.
  case serverResponseLost
  /// The server refused the request for good (a malformed record, a field the schema does not
  /// allow): retrying will not help.
  case serverRejectedRequest
  /// The account may not write this record: a read-only participant of a share, or one whose
  /// access ended. Retrying cannot help; the engine should take the server's record back and
  /// tell the user.
  case permissionFailure
  /// The asset's file was not there when the save needed it (Apple,
  /// `CKError.Code.assetFileNotFound`): deleted by the app, or by an engine that let its upload
  /// copy go before the save was confirmed. Retrying the same save cannot help.
  case assetFileNotFound
  /// The asset's file changed while it was being uploaded (Apple,
  /// `CKError.Code.assetFileModified`): send it again, reading the file anew.
  case assetFileModified

  public var description: String { rawValue }

  /// How a correct engine reacts (the `retry=transient` reading): what the error asks of it.
  public enum Reaction: Hashable, Sendable {
    /// Keep the change pending and send it again later: after the error's retry-after when it
    /// carries one, after the engine's backoff otherwise.
    case retry
    /// Split the request and send the halves (``CloudKitError/limitExceeded``).
    case split
    /// The server no longer has the record or its zone: keep the change and upload the whole
    /// record again as new.
    case reupload
    /// Retrying cannot help: give up and tell the user (the record strands, visibly).
    case giveUp
  }

  /// What a correct engine does with the error.
  public var reaction: Reaction {
    switch self {
    case .zoneBusy, .requestRateLimited, .serviceUnavailable, .quotaExceeded, .batchRequestFailed, .referenceViolation, .serverResponseLost:
      .retry
    case .limitExceeded: .split
    case .unknownItem, .zoneNotFound, .userDeletedZone: .reupload
    case .serverRejectedRequest, .permissionFailure, .assetFileNotFound: .giveUp
    case .assetFileModified: .retry
    }
  }

  /// Whether the error is transient: the same request can succeed later without any change.
  public var isTransient: Bool { reaction == .retry }

  /// Whether CloudKit attaches a retry-after (`CKErrorRetryAfterKey`) to this error.
  public var carriesRetryAfter: Bool {
    switch self {
    case .zoneBusy, .requestRateLimited, .serviceUnavailable: true
    default: false
    }
  }

  /// The error's number in traces and digests (stable: new errors get new numbers).
  package var code: Int64 {
    switch self {
    case .zoneBusy: 1
    case .requestRateLimited: 2
    case .serviceUnavailable: 3
    case .quotaExceeded: 4
    case .limitExceeded: 5
    case .batchRequestFailed: 6
    case .referenceViolation: 7
    case .unknownItem: 8
    case .zoneNotFound: 9
    case .userDeletedZone: 10
    case .serverResponseLost: 11
    case .serverRejectedRequest: 12
    case .permissionFailure: 13
    case .assetFileNotFound: 14
    case .assetFileModified: 15
    }
  }

  /// The errors a scenario's `reject` line may choose: every one that answers a single record
  /// (but `permissionFailure`, which the server answers from the shares themselves, and the
  /// asset errors, which come from the device's own files).
  public static var perRecord: [CloudKitError] {
    allCases.filter {
      $0 != .limitExceeded && $0 != .batchRequestFailed && $0 != .permissionFailure && $0 != .assetFileNotFound && $0 != .assetFileModified
    }
  }
}

/// A request budget: at most `requests` requests in each window of `window` (windows start at
/// time zero).
public struct RequestBudget: Hashable, Sendable, CustomStringConvertible {
  /// Requests allowed per window.
  public var requests: Int
  /// The window's length.
  public var window: SimDuration

  /// A budget of `requests` per `window`.
  public init(requests: Int, window: SimDuration) {
    self.requests = requests
    self.window = window
  }

  /// `10/1m`.
  public var description: String { "\(requests)/\(window)" }
}

/// Throttling (`throttle device 10/1m app 100/1m`): request budgets per device and for the
/// whole app. A request over a budget is refused with `requestRateLimited` and a retry-after
/// until the window ends; a request that comes back before its retry-after is refused again and
/// doubles the wait (CloudKit's escalating throttling, as developers observe it), up to an hour.
public struct Throttle: Hashable, Sendable {
  /// Each device's budget (nil: none).
  public var perDevice: RequestBudget?
  /// The whole app's budget, all devices together (nil: none).
  public var app: RequestBudget?

  /// A throttle with these budgets.
  public init(perDevice: RequestBudget? = nil, app: RequestBudget? = nil) {
    self.perDevice = perDevice
    self.app = app
  }
}

/// What the server is like besides its records: CloudKit's request limits, the account's storage
/// quota, throttling and zone atomicity. The defaults are CloudKit's limits with no quota, no
/// throttling and a non-atomic zone: a world without conditions behaves as before they existed.
public struct ServerConditions: Hashable, Sendable {
  /// Records a request may carry (CloudKit: 400).
  public var maxRecordsPerRequest = 400
  /// Bytes a request may carry (CloudKit: 2 MB).
  public var maxBytesPerRequest: Int64 = 2_000_000
  /// The account's iCloud storage in bytes (nil: unlimited).
  public var quota: Int64?
  /// Bytes of the account's storage already used by other data (photos, other apps).
  public var usedByOthers: Int64 = 0
  /// Request budgets (nil: no throttling).
  public var throttle: Throttle?
  /// Whether a request's saves are atomic (a custom zone with atomic commits): one failure fails
  /// them all, the others with `batchRequestFailed`.
  public var atomic = false
  /// Whether references are checked (`references checked`): a save of a record whose `ref`
  /// names a record the server does not hold live, and that the same request does not save, is
  /// refused with `referenceViolation` (CloudKit's rule for a `CKRecord.Reference` with the
  /// `deleteSelf` action or a parent reference). Off by default: Core Data and SwiftData store
  /// relationships as record names in plain fields, which CloudKit does not check.
  public var checksReferences = false
  /// Whether the simulated `CKSyncEngine` fetches before it sends again after a push that came
  /// back with failures (`engine fetch-first`). Apple documents no such order (the class
  /// overview's steps for sending have no fetch; errors it retries are sent again "when it makes
  /// sense"), so by default (`engine send-first`) the engine sends again first, and fetches on
  /// its own schedule: after a send, and when a push notification comes. Only a user's app reads
  /// it.
  public var engineFetchesFirst = false

  /// No quota, no throttling, CloudKit's request limits, a non-atomic zone.
  public init() {}
}

/// A `reject` line: the server answers saves of chosen records with a chosen error until a time.
public struct RejectRule: Hashable, Sendable {
  /// The records whose saves are refused.
  public var keys: [RecordKey]
  /// The error they get.
  public var error: CloudKitError
  /// The retry-after the error carries (nil: none).
  public var retryAfter: SimDuration?
  /// When the rule ends (exclusive).
  public var until: VirtualTime

  /// A rule refusing `keys` with `error` until `until`.
  public init(keys: [RecordKey], error: CloudKitError, retryAfter: SimDuration?, until: VirtualTime) {
    self.keys = keys
    self.error = error
    self.retryAfter = retryAfter
    self.until = until
  }
}

// MARK: Sizes

extension Value {
  /// Bytes the value takes in a request and in the account's storage: text and strings by their
  /// UTF-8 bytes, bytes by their count, numbers, dates and references 8, booleans 1, null 0.
  public var byteSize: Int64 {
    switch self {
    case .null: 0
    case .string(let s): Int64(s.utf8.count)
    case .bytes(let b): Int64(b.count)
    case .int, .double, .date, .ref: 8
    case .bool: 1
    case .text(let t): t.visibleByteCount
    // An asset counts toward the account's storage by its size, whether or not it carries data.
    case .content(let c): c.size
    }
  }

  /// Bytes the value takes inside the record (what CloudKit's 1 MB a record and 2 MB a request
  /// count): as ``byteSize``, but an asset, stored beside the record, takes none.
  public var inlineByteSize: Int64 {
    if case .content(let c) = self, c.isAsset { return 0 }
    return byteSize
  }
}

extension TextValue {
  /// UTF-8 bytes of the visible text.
  public var visibleByteCount: Int64 {
    var n: Int64 = 0
    for a in atoms where a.isVisible { n += Int64(UTF8.width(a.scalar)) }
    return n
  }
}

extension RecordState {
  /// At least ``byteSize``, without reading text character by character (a character is at most
  /// 4 bytes): what a request's size check reads first.
  var byteSizeUpperBound: Int64 {
    if isDeleted { return 0 }
    var n: Int64 = 100
    for f in fields {
      switch f.value {
      case .text(let t): n += Int64(t.atoms.count) * 4
      case .string(let s): n += Int64(s.utf8.count)
      case .bytes(let b): n += Int64(b.count)
      case .content(let c): n += c.isAsset ? 0 : c.size
      default: n += 8
      }
    }
    return n
  }

  /// Bytes the record takes: its fields' values, plus 100 bytes of system fields (name, type,
  /// change tag, dates); a deleted record takes nothing.
  public var byteSize: Int64 {
    if isDeleted { return 0 }
    var n: Int64 = 100
    for f in fields { n += f.value.byteSize }
    return n
  }

  /// Bytes the record takes inside itself: ``byteSize`` without its assets (Apple, `CKRecord`:
  /// "Assets don't count toward this limit").
  public var inlineByteSize: Int64 {
    if isDeleted { return 0 }
    var n: Int64 = 100
    for f in fields { n += f.value.inlineByteSize }
    return n
  }

  /// The largest asset the record refers to (0 when none).
  public var largestAsset: Int64 {
    var n: Int64 = 0
    for f in fields { if case .content(let c) = f.value, c.isAsset { n = max(n, c.size) } }
    return n
  }
}

/// Byte counts as scenario files write them: `17B`, `250KB`, `2MB`, `1.5GB` (decimal units, as
/// iCloud storage is sold: 1 KB = 1,000 bytes).
public enum ByteCount {
  static let units: [(name: String, bytes: Int64)] = [("TB", 1_000_000_000_000), ("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000), ("B", 1)]

  /// Why a size did not parse.
  public struct ParseError: Error, Hashable, Sendable {
    /// What is wrong, quoting the text.
    public var message: String
    /// An error saying `message`.
    public init(message: String) { self.message = message }
  }

  /// Parses `250KB`, `1.5GB`, `0B`; the error says what is wrong.
  public static func parse(_ text: String) -> Result<Int64, ParseError> {
    guard let unit = units.first(where: { text.hasSuffix($0.name) }) else {
      return .failure(ParseError(message: "expected a size such as 500B, 250KB, 2MB or 1.5GB, found '\(text)'"))
    }
    let number = text.dropLast(unit.name.count)
    let parts = number.split(separator: ".", omittingEmptySubsequences: false)
    guard !number.isEmpty, parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
      parts[0].count <= 15, parts.count == 1 || parts[1].count <= 12
    else {
      return .failure(ParseError(message: "expected a size such as 500B, 250KB, 2MB or 1.5GB, found '\(text)'"))
    }
    let whole = Int64(parts[0])!
    var bytes = whole.multipliedReportingOverflow(by: unit.bytes)
    if parts.count == 2 {
      var scale = unit.bytes
      for digit in parts[1] {
        scale /= 10
        let d = Int64(String(digit))!
        if d != 0 && scale == 0 { return .failure(ParseError(message: "'\(text)' is not a whole number of bytes")) }
        bytes = bytes.partialValue.addingReportingOverflow(d * scale)
        if bytes.overflow { break }
      }
    }
    guard !bytes.overflow, bytes.partialValue <= 1_000_000_000_000_000 else {
      return .failure(ParseError(message: "size '\(text)' is too large (at most 1000000TB)"))
    }
    return .success(bytes.partialValue)
  }

  /// The shortest exact spelling: `2MB`, `1500KB`, `17B`.
  public static func format(_ bytes: Int64) -> String {
    for unit in units where bytes != 0 && bytes % unit.bytes == 0 { return "\(bytes / unit.bytes)\(unit.name)" }
    return "\(bytes)B"
  }
}

/// Why the zone went away (`CKDatabase.DatabaseChange.Deletion.Reason`): the app deleted it
/// (from another device), the user purged the app's data in Settings (everything goes and must
/// not come back), or the account's encrypted data was reset (the server lost it: devices must
/// upload everything again).
public enum ZoneDeletionReason: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
  case deleted
  case purged
  case encryptedDataReset = "encrypted-data-reset"

  public var description: String { rawValue }

  /// The number in traces and digests.
  package var code: Int64 {
    switch self {
    case .deleted: 1
    case .purged: 2
    case .encryptedDataReset: 3
    }
  }

  /// What a save to the deleted zone is answered with until the device reacts.
  public var saveError: CloudKitError { self == .purged ? .userDeletedZone : .zoneNotFound }
}
