import Foundation
import SimSyncEngine
import Testing

/// `CKRecord.FieldKey` and `CKRecord.RecordType` port by the rename `CKRecord → SyncRecord`: a
/// model that names its keys and its type as CloudKit apps do compiles and reads as before.
@Suite struct SyncRecordNamesTests {
  @Test func namedKeysAndTypesWorkAsInCloudKit() {
    let id = SyncRecordID(recordName: "c1", zoneID: SyncRecordZoneID(zoneName: "Contacts"))
    let record = SyncRecord(recordType: Person.recordType, recordID: id)
    record.encryptedValues[.personName] = "Ada"
    record[.personNickname] = "A."
    #expect(record.recordType == "Person")
    #expect(record.encryptedValues[.personName] as? String == "Ada")
    #expect(record.object(forKey: .personNickname) as? String == "A.")
    let keys: [SyncRecord.FieldKey] = record.allKeys()
    #expect(keys == ["personNickname"])
  }
}

/// A model in the shape CloudKit apps give theirs.
enum Person {
  static let recordType: SyncRecord.RecordType = "Person"
}

extension SyncRecord.FieldKey {
  static let personName = "personName"
  static let personNickname = "personNickname"
}
