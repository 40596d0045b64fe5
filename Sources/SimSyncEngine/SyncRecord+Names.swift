extension SyncRecord {
  /// A field's name in a record (`CKRecord.FieldKey`): a `String`, as CloudKit's is, so that a
  /// port keeps its named keys as they are.
  ///
  ///     extension SyncRecord.FieldKey {
  ///       static let title = "title"
  ///     }
  ///     record[.title] = "Groceries"
  public typealias FieldKey = String

  /// A record's type name (`CKRecord.RecordType`): a `String`, as CloudKit's is.
  ///
  ///     static let recordType: SyncRecord.RecordType = "Contact"
  public typealias RecordType = String
}
