import Testing

@_spi(Kernel) @testable import Simulator

@Suite struct DeviceClockTests {
  @Test func skewShiftsEveryReading() {
    let clock = DeviceClock(skew: .seconds(2))
    #expect(clock.read(at: .zero) == VirtualTime.zero + .seconds(2))
    #expect(clock.read(at: VirtualTime.zero + .seconds(10)) == VirtualTime.zero + .seconds(12))
  }

  @Test func driftAccumulatesInPartsPerMillion() {
    let fast = DeviceClock(driftPPM: 40)
    #expect(fast.read(at: VirtualTime.zero + .seconds(100)) == VirtualTime.zero + .seconds(100) + .milliseconds(4))
    let slow = DeviceClock(driftPPM: -1_000)
    #expect(slow.read(at: VirtualTime.zero + .days(1)) == VirtualTime.zero + .days(1) - .seconds(86) - .milliseconds(400))
  }

  @Test func jumpsMoveTheClockFromThenOnAndMayGoBackwards() {
    var clock = DeviceClock(skew: .milliseconds(-500))
    let t = VirtualTime.zero + .seconds(3)
    let before = clock.read(at: t)
    clock.jump(by: .seconds(-2))
    #expect(clock.read(at: t) == before - .seconds(2))
    #expect(clock.read(at: .zero).nanoseconds < 0)
  }
}
