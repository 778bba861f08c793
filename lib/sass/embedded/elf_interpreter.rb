# frozen_string_literal: true

module Sass
  module Embedded
    # The program interpreter (dynamic loader) an ELF executable names in its
    # PT_INTERP header: +/lib64/ld-linux-x86-64.so.2+ for glibc,
    # +/lib/ld-musl-x86_64.so.1+ for musl.
    module ElfInterpreter
      PT_INTERP = 3

      # How an ELF file of one class (32 or 64 bits) and byte order lays out
      # the fields read here: pack directives, and offsets in the file header
      # and in a program header.
      Layout = Struct.new(:half, :word, :address, :phoff_at, :phentsize_at, :header_size, :offset_at, :size_at) do
        def self.for(ident)
          half, word, quad = ident.getbyte(5) == 1 ? %w[v V Q<] : %w[n N Q>]
          if ident.getbyte(4) == 2
            new(half, word, quad, 32, 54, 64, 8, 32)
          else
            new(half, word, word, 28, 42, 52, 4, 16)
          end
        end
      end

      module_function

      # @return [String, nil] nil if +path+ is not an ELF file or names none
      def of(path)
        File.open(path, 'rb') do |file|
          header = file.read(64).to_s
          return nil unless header.start_with?("\x7FELF".b)

          layout = Layout.for(header)
          return nil if header.bytesize < layout.header_size

          phoff = header.unpack1(layout.address, offset: layout.phoff_at)
          phentsize, phnum = header.unpack("@#{layout.phentsize_at}#{layout.half}#{layout.half}")
          interpreter(file, layout, phoff, phentsize, phnum)
        end
      rescue SystemCallError
        nil
      end

      # The text of the PT_INTERP segment among the +phnum+ program headers
      # at +phoff+.
      def interpreter(file, layout, phoff, phentsize, phnum)
        phnum.times do |index|
          file.seek(phoff + (index * phentsize))
          entry = file.read(phentsize).to_s
          return nil if entry.bytesize < phentsize
          next unless entry.unpack1(layout.word) == PT_INTERP

          file.seek(entry.unpack1(layout.address, offset: layout.offset_at))
          return file.read(entry.unpack1(layout.address, offset: layout.size_at)).to_s.delete_suffix("\0")
        end
        nil
      end
    end

    private_constant :ElfInterpreter
  end
end
