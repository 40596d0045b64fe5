/// A record, as every device and the server name it: a dense index into the world's record table.
public typealias RecordKey = Int32

/// An intent's id: `i1`, `i2`, … in the order intents happen (ids start at 1; 0 means "no intent",
/// the schema's default).
public typealias IntentID = Int32

/// A field value. Text is a sequence of characters each tagged with the intent that inserted it.
public enum Value: Hashable, Sendable {
  case null
  case string(String)
  case int(Int64)
  case bool(Bool)
  /// Nanoseconds from the start of the simulation.
  case date(Int64)
  case ref(RecordKey)
  case text(TextValue)
  /// A floating-point number (`Double`, `Float`, `Decimal` in the app), never NaN: scenario
  /// literals cannot write one, and an app's NaN is read as no value (NaN is not equal to itself,
  /// so no write could be told to have made it).
  case double(Double)
  /// Bytes stored in the record itself (`Data`; Core Data's Binary), as a `CKRecord` holds them.
  case bytes([UInt8])
  /// Content known by its name and size, never held in memory: an asset (`CKAsset`, stored
  /// beside the record) or inline bytes written by size (`bytes("body-v3", 1.2MB)`).
  case content(Content)
}

/// Content the simulator knows by name and size only, so that a 40 MB video costs what a short
/// string costs. The name is the content's identity: two values with the same name are the same
/// bytes.
public struct Content: Hashable, Sendable {
  /// The content's identity, as the scenario names it (`IMG_0042.heic`).
  public var name: String
  /// Its size in bytes.
  public var size: Int64
  /// Whether it is an asset (`CKAsset`: stored beside the record, not counted in the record's
  /// 1 MB) or bytes stored in the record itself.
  public var isAsset: Bool
  /// Whether the value carries its data. `false` only for an asset copied from the server record
  /// that comes with `serverRecordChanged`, whose `fileURL` is nil (Apple, `CKAsset.fileURL`):
  /// saved again, it replaces the asset with nothing.
  public var hasData: Bool

  /// Content of `size` bytes named `name`.
  public init(name: String, size: Int64, isAsset: Bool, hasData: Bool = true) {
    self.name = name
    self.size = size
    self.isAsset = isAsset
    self.hasData = hasData
  }
}

extension Value {
  /// The value as its write carried it: an asset that lost its data (saved from
  /// `serverRecordChanged`'s record) is still that write's asset — what is missing is judged as
  /// `missing-asset`, not as a value nobody wrote.
  package var asWritten: Value {
    if case .content(var c) = self, !c.hasData {
      c.hasData = true
      return .content(c)
    }
    return self
  }
}
