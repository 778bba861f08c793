# frozen_string_literal: true

require 'digest'

module SassEmbeddedBuild
  # What the darwin gems' checks read of a thin 64-bit Mach-O file, read
  # here because no Apple tool runs on this machine: its CPU, the oldest
  # macOS it asks for, the libraries it links, the symbols it exports and
  # those it leaves undefined, and its embedded code signature, re-hashed
  # page by page as the kernel checks it. Raises MachO::Malformed on a file
  # it cannot read.
  class MachO
    class Malformed < StandardError; end

    MH_MAGIC_64 = 0xfeedfacf
    CPU_TYPES = { 0x0100000c => 'arm64', 0x01000007 => 'x86_64' }.freeze
    FILE_TYPES = { 2 => :executable, 6 => :dylib, 8 => :bundle }.freeze

    LC_SYMTAB = 0x2
    LC_LOAD_DYLIB = 0xc
    LC_CODE_SIGNATURE = 0x1d
    LC_VERSION_MIN_MACOSX = 0x24
    LC_DYLD_INFO = 0x22
    LC_BUILD_VERSION = 0x32
    LC_REQ_DYLD = 0x80000000
    # Every command that links a library (weak, re-exported, lazy, upward):
    # its ordinal, from 1, is its place among these.
    LINK_COMMANDS = [LC_LOAD_DYLIB, 0x18 | LC_REQ_DYLD, 0x1f | LC_REQ_DYLD, 0x20, 0x23 | LC_REQ_DYLD].freeze
    LC_DYLD_EXPORTS_TRIE = 0x33 | LC_REQ_DYLD
    PLATFORM_MACOS = 1

    # nlist_64's n_type: a debugging entry, the type mask, undefined, external.
    N_STAB = 0xe0
    N_TYPE = 0x0e
    N_UNDF = 0x0
    N_EXT = 0x01
    # The library ordinal of a symbol left to whatever image defines it at
    # run time (-undefined dynamic_lookup).
    DYNAMIC_LOOKUP_ORDINAL = 0xfe

    # An undefined symbol and the library it is bound to (a name), or
    # :dynamic_lookup, or :flat (looked up in every image).
    Undefined = Struct.new(:name, :library)

    attr_reader :path, :cpu, :file_type

    def self.read(path) = new(File.binread(path), path)

    def initialize(bytes, path = '(bytes)')
      @bytes = bytes.b
      @path = path
      magic, cpu, _subtype, file_type, count, = unpack('L<l<l<L<L<', 0)
      raise Malformed, "#{path}: not a thin 64-bit Mach-O file (magic #{format('%#x', magic.to_i)})" \
        unless magic == MH_MAGIC_64

      @cpu = CPU_TYPES.fetch(cpu & 0xffffffff) { format('cpu %#x', cpu & 0xffffffff) }
      @file_type = FILE_TYPES.fetch(file_type, file_type)
      @commands = read_commands(count)
    end

    # The macOS release the file asks for, e.g. "11.0"; nil if it names
    # none, or names another platform (iOS, ...).
    def minimum_macos
      command(LC_BUILD_VERSION) do |offset|
        platform, minos = unpack('L<L<', offset + 8)
        return platform == PLATFORM_MACOS ? version(minos) : nil
      end
      command(LC_VERSION_MIN_MACOSX) { |offset| return version(unpack('L<', offset + 8).first) }
      nil
    end

    # The install names of the libraries it links, in ordinal order.
    def libraries
      @commands.select { |cmd, _, _| LINK_COMMANDS.include?(cmd) }.map do |_, offset, _|
        c_string(offset + unpack('L<', offset + 8).first)
      end
    end

    # The symbols its export trie names (what dlsym and Ruby's loader find).
    def exports
      offset, size = export_trie
      offset ? ExportTrie.names(self, offset, size) : []
    end

    # Its undefined external symbols, each with the library bound to it.
    def undefined
      symtab = @commands.find { |cmd, _, _| cmd == LC_SYMTAB } or return []
      symoff, nsyms, stroff, strsize = unpack('L<4', symtab[1] + 8)
      libs = libraries
      Array.new(nsyms) do |index|
        strx, type, _sect, desc, = unpack('L<CCS<Q<', symoff + (index * 16))
        next if type.anybits?(N_STAB) || (type & N_TYPE) != N_UNDF || type.nobits?(N_EXT)
        raise Malformed, "#{path}: a symbol's name lies outside the string table" if strx >= strsize

        Undefined.new(c_string(stroff + strx), binding_of((desc >> 8) & 0xff, libs))
      end.compact
    end

    # The embedded signature's CodeDirectory, checked against the file; nil
    # if it has none.
    def signature
      command(LC_CODE_SIGNATURE) do |offset|
        dataoff, datasize = unpack('L<L<', offset + 8)
        return CodeSignature.check(self, dataoff, datasize)
      end
      nil
    end

    # The values of +format+ at +offset+; Malformed outside the file.
    def unpack(format, offset)
      raise Malformed, "#{path}: truncated at byte #{offset}" if offset.negative? || offset >= @bytes.bytesize

      @bytes.unpack(format, offset:)
    end

    # The NUL-terminated string at +offset+.
    def c_string(offset)
      unpack('Z*', offset).first
    end

    # The ULEB128 number at +position+, and the position after it.
    def uleb128(position)
      value = 0
      shift = 0
      loop do
        byte = unpack('C', position).first
        position += 1
        value |= (byte & 0x7f) << shift
        return [value, position] if byte < 0x80

        shift += 7
        raise Malformed, "#{path}: a ULEB128 over 64 bits" if shift > 63
      end
    end

    # +length+ bytes from +offset+ (fewer at the end of the file).
    def bytes(offset, length) = @bytes.byteslice(offset, length)

    def size = @bytes.bytesize

    private

    def read_commands(count)
      offset = 32
      Array.new(count) do
        cmd, size = unpack('L<L<', offset)
        raise Malformed, "#{path}: a load command of #{size} bytes at #{offset}" if size < 8

        [cmd, offset, size].tap { offset += size }
      end
    end

    def command(type)
      @commands.each { |cmd, offset, _| yield offset if cmd == type }
    end

    def version(packed) = "#{packed >> 16}.#{(packed >> 8) & 0xff}"

    def binding_of(ordinal, libs)
      case ordinal
      when 0 then :flat
      when DYNAMIC_LOOKUP_ORDINAL then :dynamic_lookup
      else libs.fetch(ordinal - 1) { raise Malformed, "#{path}: library ordinal #{ordinal} of #{libs.size}" }
      end
    end

    def export_trie
      command(LC_DYLD_EXPORTS_TRIE) { |offset| return unpack('L<L<', offset + 8) }
      [LC_DYLD_INFO, LC_DYLD_INFO | LC_REQ_DYLD].each do |type|
        command(type) { |offset| return unpack('L<L<', offset + 40) }
      end
      nil
    end
  end
end

module SassEmbeddedBuild
  class MachO
    # The names an export trie holds: a node is the size of its export
    # information (ULEB128, 0 for none), that information, a child count and
    # each child's edge label and offset. Walked with a stack; a node is
    # visited once, so a malformed trie cannot loop.
    module ExportTrie
      module_function

      def names(file, start, size)
        names = []
        stack = [[0, '']]
        seen = {}
        until stack.empty?
          node, prefix = stack.pop
          raise Malformed, "#{file.path}: export trie node at #{node} of #{size}" if node >= size || seen[node]

          seen[node] = true
          terminal, position = file.uleb128(start + node)
          names << prefix if terminal.positive?
          children(file, position + terminal) { |label, child| stack << [child, prefix + label] }
        end
        names
      end

      def children(file, position)
        count = file.unpack('C', position).first
        position += 1
        count.times do
          label = file.c_string(position)
          child, position = file.uleb128(position + label.bytesize + 1)
          yield label, child
        end
      end
    end

    # An embedded code signature's CodeDirectory, checked against the file
    # as the kernel checks it: every page up to the signature hashed again.
    # Blobs are big-endian, as Apple's code signing formats are.
    module CodeSignature
      SUPERBLOB_MAGIC = 0xfade0cc0
      CODE_DIRECTORY_MAGIC = 0xfade0c02
      CS_ADHOC = 0x2
      CS_LINKER_SIGNED = 0x20000
      HASHES = { 1 => 'SHA1', 2 => 'SHA256' }.freeze

      # What re-hashing found.
      Result = Struct.new(:adhoc, :linker_signed, :algorithm, :pages, :bad_pages, :covers_code, keyword_init: true) do
        def valid? = bad_pages.empty? && covers_code
      end

      module_function

      def check(file, dataoff, datasize)
        magic, _length, count = file.unpack('NNN', dataoff)
        raise Malformed, "#{file.path}: the signature is not a SuperBlob" unless magic == SUPERBLOB_MAGIC

        directory = Array.new(count) { |index| dataoff + file.unpack('N', dataoff + 16 + (index * 8)).first }
                         .find { |blob| file.unpack('N', blob).first == CODE_DIRECTORY_MAGIC }
        raise Malformed, "#{file.path}: the signature has no CodeDirectory" unless directory

        code_directory(file, directory, dataoff, datasize)
      end

      def code_directory(file, blob, dataoff, datasize)
        _magic, _length, _version, flags, hash_offset, _ident, _special, slots, limit, hash_size, hash_type, _platform,
          page_shift = file.unpack('N9C4', blob)
        algorithm = HASHES.fetch(hash_type) { raise Malformed, "#{file.path}: hash type #{hash_type}" }
        page = 1 << page_shift
        bad = (0...slots).reject do |index|
          code = file.bytes(index * page, [page, limit - (index * page)].min)
          Digest(algorithm).digest(code).byteslice(0, hash_size) ==
            file.bytes(blob + hash_offset + (index * hash_size), hash_size)
        end
        covers = limit == dataoff && slots == (limit + page - 1) / page && dataoff + datasize <= file.size
        Result.new(adhoc: flags.anybits?(CS_ADHOC), linker_signed: flags.anybits?(CS_LINKER_SIGNED), algorithm:,
                   pages: slots, bad_pages: bad, covers_code: covers)
      end
    end
  end
end
