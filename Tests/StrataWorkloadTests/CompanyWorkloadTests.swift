import StrataWorkload
import Testing

// Expected values were computed once with an independent Python implementation of WORKLOAD.md (one SplitMix64
// seeded 42: 100 departments, then the employees; sums in insertion order), not with this library.
@Suite struct CompanyWorkloadTests {
    @Test func firstAndLastDepartmentsArePinned() {
        let departments = CompanyWorkload(employeeCount: 0).departments
        #expect(departments.count == 100)
        #expect(departments[0] == Department(name: "Bkquuxmrgvcyv", budget: 6_685_078.166917041))
        #expect(departments[1] == Department(name: "Vlhmwhldkrddbx", budget: 7_920_091.851720433))
        #expect(departments[2] == Department(name: "Pottxvuimhanlcgl", budget: 5_098_224.526299636))
        #expect(departments[99] == Department(name: "Ecbvzfzogkmnbno", budget: 7_443_010.060904928))
        #expect(departments.reduce(0) { $0 + $1.budget } == 524_570_223.9318745)
    }

    @Test func firstEmployeesArePinned() {
        let employees = Array(CompanyWorkload(employeeCount: 1_000).employees)
        #expect(employees.count == 1_000)
        #expect(
            employees[0]
                == Employee(name: "Acqkzhbioiiyxzt", salary: 46_434, hired: 1_609_400_099.2323754, department: 25)
        )
        #expect(
            employees[1]
                == Employee(name: "Onntzyzptmijcfocdzs", salary: 57_608, hired: 1_479_509_768.8851657, department: 90)
        )
        #expect(
            employees[2]
                == Employee(name: "Barlqihjfgsl", salary: 78_722, hired: 1_686_411_381.8562636, department: 34)
        )
        #expect(
            employees[999]
                == Employee(name: "Uwsgxrmvranbulud", salary: 99_324, hired: 1_343_695_853.8994849, department: 40)
        )
        #expect(employees.reduce(0) { $0 + $1.salary } == 113_944_530)
        #expect(employees.reduce(0) { $0 + $1.department } == 50_703)
    }

    @Test func oneHundredThousandEmployeesArePinned() {
        var count = 0
        var salaries: Int64 = 0
        var hired = 0.0
        var departments = 0
        var nameBytes = 0
        var last: Employee?
        for employee in CompanyWorkload(employeeCount: 100_000).employees {
            count += 1
            salaries += employee.salary
            hired += employee.hired
            departments += employee.department
            nameBytes += employee.name.utf8.count
            last = employee
        }
        #expect(count == 100_000)
        #expect(salaries == 11_501_378_782)
        #expect(hired == 132_213_335_601_717.23)
        #expect(departments == 5_044_241)
        #expect(nameBytes == 1_600_334)
        #expect(
            last == Employee(name: "Qlcdzsceugjqcvotdeq", salary: 79_523, hired: 979_275_157.8750199, department: 80)
        )
    }

    @Test func employeesArePrefixesOfLongerRuns() {
        let short = Array(CompanyWorkload(employeeCount: 50).employees)
        let long = Array(CompanyWorkload(employeeCount: 500).employees)
        #expect(short == Array(long.prefix(50)))
    }

    @Test func iteratingTwiceYieldsTheSameEmployees() {
        let workload = CompanyWorkload(employeeCount: 300)
        #expect(Array(workload.employees) == Array(workload.employees))
        #expect(CompanyWorkload(employeeCount: 300).departments == workload.departments)
        #expect(workload.employees.underestimatedCount == 300)
    }

    @Test func valuesStayInTheirRanges() {
        let workload = CompanyWorkload(employeeCount: 20_000)
        for department in workload.departments {
            #expect(department.budget >= 100_000 && department.budget < 10_000_000)
            #expect(isWorkloadName(department.name))
        }
        var seenDepartments = Set<Int>()
        for employee in workload.employees {
            #expect((30_000...200_000).contains(employee.salary))
            #expect(employee.hired >= 946_684_800 && employee.hired < 1_696_684_800)
            #expect((1...100).contains(employee.department))
            #expect(isWorkloadName(employee.name))
            seenDepartments.insert(employee.department)
        }
        #expect(seenDepartments == Set(1...100))
    }

    @Test func zeroEmployeesIsAnEmptySequence() {
        #expect(Array(CompanyWorkload(employeeCount: 0).employees).isEmpty)
    }

    private func isWorkloadName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return (12...20).contains(bytes.count)
            && (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[0])
            && bytes.dropFirst().allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }
}
