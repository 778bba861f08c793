# frozen_string_literal: true

module SassEmbeddedBuild
  # What the Windows gem's checks read of a PE file (a DLL or a program),
  # read here because no Windows tool runs on this machine outside Wine: its
  # machine, whether it is PE32+, whether it is a DLL, and the DLLs it
  # imports. Raises PE::Malformed on a file it cannot read.
  class PE
    class Malformed < StandardError; end

    MACHINE_AMD64 = 0x8664
    PE32_PLUS = 0x20b
    IMAGE_FILE_DLL = 0x2000
    # Data directory 1: the import table.
    IMPORT_DIRECTORY = 1

    attr_reader :machine, :magic, :characteristics, :imports

    def self.read(path) = new(File.binread(path))

    def initialize(bytes)
      @bytes = bytes
      raise Malformed, 'no MZ header' unless bytes.byteslice(0, 2) == 'MZ'

      header = u32(0x3c)
      raise Malformed, 'no PE signature' unless bytes.byteslice(header, 4) == "PE\0\0"

      @machine, sections, optional_size, @characteristics = bytes.unpack("@#{header + 4}v v @#{header + 20}v v")
      optional = header + 24
      @magic = u16(optional)
      @sections = read_sections(optional + optional_size, sections)
      @imports = pe32_plus? ? read_imports(optional) : []
    end

    def x86_64? = machine == MACHINE_AMD64
    def pe32_plus? = magic == PE32_PLUS
    def dll? = characteristics.anybits?(IMAGE_FILE_DLL)

    # Why this is not an extension for the x64 UCRT Ruby whose DLL is
    # +ruby_dll+ (empty: it is one).
    def problems(ruby_dll:)
      lowered = imports.map(&:downcase)
      [
        ('not x86-64' unless x86_64?),
        ('not PE32+' unless pe32_plus?),
        ('not a DLL' unless dll?),
        ('imports msvcrt.dll (the old C runtime)' if lowered.include?('msvcrt.dll')),
        ('imports no UCRT (api-ms-win-crt-*.dll or ucrtbase.dll)' unless lowered.any? do |name|
          name.start_with?('api-ms-win-crt-') || name == 'ucrtbase.dll'
        end),
        ("does not import #{ruby_dll}" unless lowered.include?(ruby_dll.downcase))
      ].compact
    end

    private

    def u16(offset) = @bytes.unpack1('v', offset:) || raise(Malformed, "truncated at #{offset}")
    def u32(offset) = @bytes.unpack1('V', offset:) || raise(Malformed, "truncated at #{offset}")

    # [virtual address, virtual size, raw offset] of each section.
    def read_sections(offset, count)
      Array.new(count) do |index|
        entry = offset + (index * 40)
        raise Malformed, 'truncated section table' if entry + 40 > @bytes.bytesize

        virtual_size, address, _raw_size, raw = @bytes.unpack("@#{entry + 8}V V V V")
        [address, virtual_size, raw]
      end
    end

    def file_offset(rva)
      address, _, raw = @sections.find { |start, size, _| rva >= start && rva < start + size }
      raise Malformed, "address 0x#{rva.to_s(16)} is in no section" unless address

      raw + (rva - address)
    end

    # The names of the DLLs in the import directory (PE32+: the data
    # directories start 112 bytes into the optional header).
    def read_imports(optional)
      rva = u32(optional + 112 + (IMPORT_DIRECTORY * 8))
      return [] if rva.zero?

      names = []
      entry = file_offset(rva)
      loop do
        name_rva = u32(entry + 12)
        break if name_rva.zero?

        start = file_offset(name_rva)
        names << @bytes.byteslice(start, 256).unpack1('Z*')
        entry += 20
      end
      names
    end
  end
end
