import Foundation
@_spi(Kernel) import Simulator
import Testing

/// Swift seeds `Hasher` differently in every process, so agreeing across processes proves that
/// no trace depends on `Set`/`Dictionary` order (the kernel workload keeps a dictionary).
@Suite struct CrossProcessDeterminismTests {
  @Test(arguments: [UInt64(1), 42, 9_001])
  func theSameSeedGivesTheSameHashInSeparateProcesses(seed: UInt64) throws {
    let inProcess = KernelWorkload.run(seed: seed).hash
    let first = try runProcess(["selftest", "--seed", "\(seed)", "--format", "json"])
    let second = try runProcess(["selftest", "--seed", "\(seed)", "--format", "json"])
    #expect(first.code == 0)
    #expect(first.stdout == second.stdout)
    #expect(first.stdout.contains("\"traceHash\":\"\(inProcess)\""))
  }

  @Test func theBinaryExitsWithTheDocumentedCodes() throws {
    #expect(try runProcess([]).code == 64)
    #expect(try runProcess(["--version"]).code == 0)
    let typo = try runProcess(["bench", "kernal"])
    #expect(typo.code == 64)
    #expect(typo.stderr.contains("Did you mean 'kernel'?"))
  }
}
