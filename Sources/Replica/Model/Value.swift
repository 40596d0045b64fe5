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
}
