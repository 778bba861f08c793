# frozen_string_literal: true

module Sass
  module Embedded
    # Conversions between filesystem paths and +file:+ URLs, for POSIX and
    # Windows paths alike: drive letters (+C:\\dir+ is +file:///C:/dir+), UNC
    # shares (+\\\\server\\share+ is +file://server/share+), and every byte that
    # is not allowed in a URL path percent-encoded (UTF-8 for non-ASCII).
    module Url
      module_function

      # @param path [String] an absolute path
      # @param windows [Boolean] whether +path+ is a Windows path (defaults to
      #   the platform's kind)
      # @return [String] the +file:+ URL of +path+
      def path_to_file_url(path, windows: windows?)
        path = path.to_s
        if windows
          path = path.tr('\\', '/')
          return "file:#{escape(path)}" if path.start_with?('//') # a UNC share: file://server/share

          path = "/#{path}" if path.match?(%r{\A[A-Za-z]:/}) || path.match?(/\A[A-Za-z]:\z/)
        end
        raise ArgumentError, "#{path.inspect} is not an absolute path" unless path.start_with?('/')

        "file://#{escape(path)}"
      end

      # @param url [String] a +file:+ URL
      # @param windows [Boolean] whether to make a Windows path
      # @return [String] the path +url+ refers to
      def file_url_to_path(url, windows: windows?)
        url = url.to_s
        raise ArgumentError, "#{url.inspect} is not a file: URL" unless url.downcase.start_with?('file:')

        rest = url.sub(/\Afile:/i, '').sub(/[?#].*\z/m, '')
        host, path = if rest.start_with?('//')
                       authority, _, remainder = rest[2..].partition('/')
                       [authority, "/#{remainder}"]
                     else
                       ['', rest]
                     end
        path = unescape(path)
        host = unescape(host)
        host = '' if host.casecmp?('localhost')
        return file_url_to_windows_path(host, path) if windows
        raise ArgumentError, "#{url.inspect} names a host (#{host}); only local file: URLs are paths" unless host.empty?

        path
      end

      def file_url_to_windows_path(host, path)
        return "\\\\#{host}#{path.tr('/', '\\')}" unless host.empty?

        path = path.delete_prefix('/') if path.match?(%r{\A/[A-Za-z]:(/|\z)})
        path.tr('/', '\\')
      end

      def escape(path)
        path.encode(Encoding::UTF_8).b.gsub(%r{[^A-Za-z0-9\-._~!$&'()*+,;=:@/]}n) do |byte|
          format('%%%<byte>02X', byte: byte.ord)
        end
      end

      def unescape(text)
        text.b.gsub(/%([0-9A-Fa-f]{2})/n) { Regexp.last_match(1).hex.chr }.force_encoding(Encoding::UTF_8)
      end

      def windows?
        Gem.win_platform?
      end
    end

    private_constant :Url
  end
end
