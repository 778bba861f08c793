# frozen_string_literal: true

# Makes zig's libSystem.tbd readable by LLVM's ld64.lld: its TAPI reader
# rejects the `arm64e.x1-*` targets ("unknown architecture"), and zig's file
# names arm64e only where ld64.lld looks for arm64. Usage: ruby lld_tbd.rb IN OUT
text = File.read(ARGV.fetch(0))
text = text.gsub(/\[([^\[\]]*?-mac(?:os|catalyst)[^\[\]]*?)\]/m) do
  items = Regexp.last_match(1).split(',').map(&:strip).reject { |item| item.empty? || item.start_with?('arm64e.x1-') }
  if items.include?('arm64e-macos') && !items.include?('arm64-macos')
    items.insert(items.index('arm64e-macos'), 'arm64-macos')
  end
  "[ #{items.join(', ')} ]"
end
File.write(ARGV.fetch(1), text)
