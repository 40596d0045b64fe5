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
}
