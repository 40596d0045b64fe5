import Foundation

/// A record zone's identity, as `CKRecordZone.ID`: its name and its owner.
public struct SyncRecordZoneID: Hashable, Sendable, Codable, CustomStringConvertible {
  /// The owner of a zone in the user's own private database (`CKCurrentUserDefaultName`).
  public static let currentUserName = "__defaultOwner__"
  /// The zone's name.
  public var zoneName: String
  /// Who owns the zone.
  public var ownerName: String

  /// A zone called `zoneName` of `ownerName` (the current user by default).
  public init(zoneName: String, ownerName: String = SyncRecordZoneID.currentUserName) {
    self.zoneName = zoneName
    self.ownerName = ownerName
  }

  /// `Notes` (or `Notes@owner` for another owner's zone).
  public var description: String { ownerName == Self.currentUserName ? zoneName : "\(zoneName)@\(ownerName)" }
}

/// A record's identity, as `CKRecord.ID`: its name in its zone.
public struct SyncRecordID: Hashable, Sendable, Codable, CustomStringConvertible {
  /// The record's name, unique in its zone.
  public var recordName: String
  /// The zone the record is in.
  public var zoneID: SyncRecordZoneID

  /// The record called `recordName` in zone `zoneID`.
  public init(recordName: String, zoneID: SyncRecordZoneID) {
    self.recordName = recordName
    self.zoneID = zoneID
  }

  /// `n1 (Notes)`.
  public var description: String { "\(recordName) (\(zoneID))" }
}

/// A value a record field can hold, as `CKRecordValue`: a string, a number, a Boolean, a date,
/// bytes, a reference to another record, a list of strings, or an asset.
public enum SyncValue: Hashable, Sendable, Codable {
  case string(String)
  case int(Int64)
  case double(Double)
  case bool(Bool)
  /// A date, as nanoseconds since 2001-01-01 (`Date`'s reference date) on the simulated clock.
  case date(Int64)
  case data(Data)
  case reference(SyncRecord.Reference)
  case strings([String])
  /// A file stored beside the record (`CKAsset`).
  case asset(SyncAsset)
}

/// A type whose values a record field can hold (`CKRecordValueProtocol`): write
/// `record["title"] = note.title` as with CloudKit.
public protocol SyncRecordValue: Sendable {
  /// The value as a record stores it.
  var syncValue: SyncValue { get }
  /// The value a record stores, read back as this type (nil when it holds another kind).
  init?(syncValue: SyncValue)
}

extension String: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .string(self) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .string(let s) = syncValue else { return nil }
    self = s
  }
}

extension Int: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .int(Int64(self)) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .int(let n) = syncValue, let v = Int(exactly: n) else { return nil }
    self = v
  }
}

extension Int64: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .int(self) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .int(let n) = syncValue else { return nil }
    self = n
  }
}

extension Double: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .double(self) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .double(let d) = syncValue else { return nil }
    self = d
  }
}

extension Bool: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .bool(self) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .bool(let b) = syncValue else { return nil }
    self = b
  }
}

extension Date: SyncRecordValue {
  /// The value as a record stores it: nanoseconds since 2001 in 64 bits, which reach from 1709
  /// to 2293. `Date.distantPast` and `Date.distantFuture` are stored as the two ends and read
  /// back as themselves; any other date outside that span is stored as the nearer end, so that
  /// dates keep their order, and reads back as `distantPast` or `distantFuture` (a date that is
  /// not a number, as `distantPast`).
  public var syncValue: SyncValue {
    let ns = (timeIntervalSinceReferenceDate * 1e9).rounded()
    // (`Double(Int64.max)` rounds up to 2^63, which no Int64 holds: hence `<`, not `<=`.)
    guard ns > Double(Int64.min), ns < Double(Int64.max) else { return .date(ns > 0 ? .max : .min) }
    return .date(Int64(ns))
  }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .date(let ns) = syncValue else { return nil }
    switch ns {
    case .min: self = .distantPast
    case .max: self = .distantFuture
    default: self.init(timeIntervalSinceReferenceDate: Double(ns) / 1e9)
    }
  }
}

extension SyncRecord.Reference: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .reference(self) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .reference(let r) = syncValue else { return nil }
    self = r
  }
}

extension Data: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .data(self) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .data(let d) = syncValue else { return nil }
    self = d
  }
}

extension Array: SyncRecordValue where Element == String {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .strings(self) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .strings(let s) = syncValue else { return nil }
    self = s
  }
}

extension SyncValue {
  /// The value as the Swift type an app casts it to: `String`, `Int`, `Double`, `Bool`, `Date`,
  /// `Data`, `SyncRecord.Reference`, `[String]` or `SyncAsset`.
  public var natural: any SyncRecordValue {
    switch self {
    case .string(let s): s
    case .int(let n): Int(exactly: n) ?? Int(truncatingIfNeeded: n)
    case .double(let d): d
    case .bool(let b): b
    case .date: Date(syncValue: self)!
    case .data(let d): d
    case .reference(let r): r
    case .strings(let s): s
    case .asset(let a): a
    }
  }
}

/// A record, as `CKRecord`: a type, an identity, fields by name, and the system fields the
/// server keeps (the change tag above all). A class, as `CKRecord` is: the engine hands the
/// same record to the delegate that the app changes.
///
///     let record = SyncRecord(recordType: "Note", recordID: id)
///     record["title"] = "Groceries"
///     let title = record["title"] as? String
public class SyncRecord: @unchecked Sendable, CustomStringConvertible {
  /// A reference from one record to another (`CKRecord.Reference`): the target's identity and
  /// what the server does with this record when the target is deleted.
  public struct Reference: Hashable, Sendable, Codable {
    /// What the server does with the referring record when the target is deleted.
    public enum Action: String, Hashable, Sendable, Codable {
      /// Nothing.
      case none
      /// Deletes the referring record too.
      case deleteSelf
    }
    /// The record referred to.
    public var recordID: SyncRecordID
    /// What deleting it does to the referring record.
    public var action: Action

    /// A reference to `recordID`.
    public init(recordID: SyncRecordID, action: Action) {
      self.recordID = recordID
      self.action = action
    }

    /// A reference to `record`.
    public init(record: SyncRecord, action: Action) {
      self.init(recordID: record.recordID, action: action)
    }
  }

  /// The system fields: what `encodeSystemFields` keeps (`CKRecord` keeps them for the next save).
  struct SystemFields: Codable, Hashable {
    var recordType: String
    var recordID: SyncRecordID
    var recordChangeTag: String?
    var creationDate: Int64?
    var modificationDate: Int64?

    /// The first byte of an encoding (``encodedSystemFields``): other bytes are not one.
    static let mark: UInt8 = 0xC5

    init(recordType: String, recordID: SyncRecordID, recordChangeTag: String? = nil, creationDate: Int64? = nil, modificationDate: Int64? = nil) {
      self.recordType = recordType
      self.recordID = recordID
      self.recordChangeTag = recordChangeTag
      self.creationDate = creationDate
      self.modificationDate = modificationDate
    }

    func write(to w: inout CompactWriter) {
      w.byte(Self.mark)
      w.string(recordType)
      w.recordID(recordID)
      w.optional(recordChangeTag) { $0.string($1) }
      w.optional(creationDate) { $0.int($1) }
      w.optional(modificationDate) { $0.int($1) }
    }

    init(from r: inout CompactReader) throws(CompactReader.Malformed) {
      guard try r.byte() == Self.mark else { throw CompactReader.Malformed() }
      recordType = try r.string()
      recordID = try r.recordID()
      recordChangeTag = try r.optional { r throws(CompactReader.Malformed) in try r.string() }
      creationDate = try r.optional { r throws(CompactReader.Malformed) in try r.int() }
      modificationDate = try r.optional { r throws(CompactReader.Malformed) in try r.int() }
    }
  }

  var system: SystemFields
  /// Every field's value, plain and encrypted (``encryptedValues``).
  var fields: [String: SyncValue] = [:]
  /// The fields set since the record was made or fetched, plain and encrypted.
  var changed: Set<String> = []
  /// The fields held as encrypted values (``encryptedValues``); the others are plain.
  var encrypted: Set<String> = []

  /// The record this one belongs to (`CKRecord.parent`): a hierarchy share of that record, or
  /// of a record above it, shares this one too ("CloudKit shares the hierarchy when a CKShare
  /// includes a referenced record", Apple, `CKRecord.parent`). Its action is always `.none`
  /// (CloudKit throws on another); nil for none.
  ///
  /// A record the engine hands over carries it when the scenario's schema marks one of its
  /// type's `ref` fields `parent`: the field's value is the parent, and the field is there too,
  /// as the app's own reference. An app sets it before it saves a record it means to share
  /// under another, as with CloudKit:
  ///
  ///     record["list"] = SyncRecord.Reference(recordID: listID, action: .none)
  ///     record.parent = SyncRecord.Reference(recordID: listID, action: .none)
  ///
  /// The simulator reads the parent field from the field of that name when the record has it,
  /// else from `parent` (``setParent(_:)``).
  /// (A parent reference whose action is `.deleteSelf` is refused when the record is sent: the
  /// device stops, as CloudKit throws.)
  public var parent: Reference? {
    didSet { parentChanged = true }
  }
  /// Whether ``parent`` was set since the record was made or fetched.
  var parentChanged = false

  /// Sets ``parent`` to a reference to `parentRecordID` with action `.none`
  /// (`CKRecord.setParent(_:)`); nil clears it.
  public func setParent(_ parentRecordID: SyncRecordID?) {
    parent = parentRecordID.map { Reference(recordID: $0, action: .none) }
  }

  /// A new record of `recordType` called `recordID`, with no fields and no change tag.
  public init(recordType: String, recordID: SyncRecordID) {
    system = SystemFields(recordType: recordType, recordID: recordID)
  }

  /// A record rebuilt from its encoded system fields (``encodedSystemFields``): no fields, the
  /// change tag it had. Nil when `systemFields` is not such an encoding.
  public init?(systemFields: Data) {
    var r = CompactReader(systemFields)
    guard let decoded = try? SystemFields(from: &r), r.atEnd else { return nil }
    system = decoded
  }

  /// The record's type (`Note`).
  public var recordType: String { system.recordType }
  /// The record's identity.
  public var recordID: SyncRecordID { system.recordID }
  /// The server's version of the record this copy was made from; nil for a record never saved.
  public var recordChangeTag: String? { system.recordChangeTag }
  /// When the server first saved the record (`CKRecord.creationDate`), on the simulated
  /// server's clock (time zero is ``SimDevice/epoch``); nil for a record never saved. A record
  /// made again under a deleted one's name has a new one.
  public var creationDate: Date? { system.creationDate.map(Self.date) }
  /// When the server last saved it (`CKRecord.modificationDate`); nil for a record never saved.
  public var modificationDate: Date? { system.modificationDate.map(Self.date) }

  /// A simulated time (nanoseconds from zero) as a date.
  static func date(_ nanoseconds: Int64) -> Date { Date(timeIntervalSince1970: SimDevice.epoch + Double(nanoseconds) / 1e9) }

  /// The system fields, encoded (deterministically) for the app to keep with its row and
  /// rebuild the record from before the next save (`encodeSystemFields(with:)` and
  /// `CKRecord(coder:)`).
  public var encodedSystemFields: Data {
    var w = CompactWriter()
    system.write(to: &w)
    return w.data
  }

  /// The value of field `key`, or nil; setting it marks the field changed. An encrypted field
  /// is read and written through ``encryptedValues`` instead: read here, it is nil.
  public subscript(key: String) -> (any SyncRecordValue)? {
    get { encrypted.isEmpty || !encrypted.contains(key) ? fields[key]?.natural : nil }
    set {
      fields[key] = newValue?.syncValue
      if !encrypted.isEmpty { encrypted.remove(key) }
      changed.insert(key)
    }
  }

  /// The value of field `key` (`CKRecord.object(forKey:)`).
  public func object(forKey key: String) -> (any SyncRecordValue)? { self[key] }

  /// Sets field `key` (`CKRecord.setObject(_:forKey:)`); nil removes it.
  public func setObject(_ value: (any SyncRecordValue)?, forKey key: String) { self[key] = value }

  /// The record's encrypted fields (`CKRecord.encryptedValues`): read and written as its other
  /// fields are, and kept apart from them — a field of the schema marked `encrypted` is read and
  /// written here, any other through the record's subscript. An app that states its schema and
  /// writes a field through the wrong one fails the run, saying which. The simulated server keeps
  /// them as it keeps the others, and the oracle judges them the same way (no cryptography is
  /// simulated).
  ///
  ///     record.encryptedValues["phone"] = contact.phone
  ///     let phone = record.encryptedValues["phone"] as? String
  public var encryptedValues: EncryptedValues { EncryptedValues(record: self) }

  /// `CKRecord.encryptedValues`, as ``encryptedValues`` gives it (`CKRecordKeyValueSetting`).
  public struct EncryptedValues {
    let record: SyncRecord
    /// The value of encrypted field `key`, or nil (nil for a plain field); setting it marks the
    /// field changed.
    public subscript(key: String) -> (any SyncRecordValue)? {
      get { record.encrypted.contains(key) ? record.fields[key]?.natural : nil }
      nonmutating set {
        record.fields[key] = newValue?.syncValue
        if newValue == nil { record.encrypted.remove(key) } else { record.encrypted.insert(key) }
        record.changed.insert(key)
      }
    }

    /// The value of encrypted field `key` (`object(forKey:)`).
    public func object(forKey key: String) -> (any SyncRecordValue)? { self[key] }

    /// Sets encrypted field `key` (`setObject(_:forKey:)`); nil removes it.
    public func setObject(_ value: (any SyncRecordValue)?, forKey key: String) { self[key] = value }

    /// The names of the encrypted fields that have a value, sorted.
    public func allKeys() -> [String] { record.encrypted.filter { record.fields[$0] != nil }.sorted() }

    /// The names of the encrypted fields set since the record was made or fetched, sorted.
    public func changedKeys() -> [String] { record.changed.filter { record.encrypted.contains($0) }.sorted() }
  }

  /// The names of the plain fields that have a value, sorted (the encrypted ones are
  /// ``encryptedValues``' `allKeys()`).
  public func allKeys() -> [String] {
    encrypted.isEmpty ? fields.keys.sorted() : fields.keys.filter { !encrypted.contains($0) }.sorted()
  }

  /// The names of the plain fields set since the record was made or fetched, sorted.
  public func changedKeys() -> [String] { encrypted.isEmpty ? changed.sorted() : changed.filter { !encrypted.contains($0) }.sorted() }

  /// A copy: same system fields and fields (a class, so a copy is explicit).
  public func copy() -> SyncRecord {
    let r = SyncRecord(recordType: recordType, recordID: recordID)
    r.system = system
    r.fields = fields
    r.changed = changed
    r.encrypted = encrypted
    r.parent = parent
    r.parentChanged = parentChanged
    return r
  }

  /// `Note n1 (Notes) tag 3: title="Groceries"` (an encrypted field as `phone(encrypted)=…`).
  public var description: String {
    let values = fields.keys.sorted().map { "\($0)\(encrypted.contains($0) ? "(encrypted)" : "")=\(fields[$0]!)" }.joined(separator: " ")
    return "\(recordType) \(recordID)" + (recordChangeTag.map { " tag \($0)" } ?? "") + (parent.map { " parent \($0.recordID.recordName)" } ?? "")
      + (values.isEmpty ? "" : ": " + values)
  }
}

extension SyncValue: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { self }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) { self = syncValue }
}
