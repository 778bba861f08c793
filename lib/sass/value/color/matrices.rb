# frozen_string_literal: true

module Sass
  module Value
    class Color
      # The 3x3 matrices between the linear-light spaces colors convert
      # through. They are derived once, in exact rational arithmetic, from the
      # definitions in CSS Color 4 (primaries' chromaticities, white points,
      # the Bradford cone response, the OKLab LMS matrices), then rounded to
      # Float, so every pair of spaces gets a full-precision matrix.
      module Matrices
        module_function

        # @return [Array<Rational>] the XYZ of a white point from its x, y
        def white(chromaticity_x, chromaticity_y)
          x = Rational(chromaticity_x)
          y = Rational(chromaticity_y)
          [x / y, 1r, (1 - x - y) / y]
        end

        # @return [Array<Array<Rational>>] the product of two 3x3 matrices
        def multiply(left, right)
          left.map do |row|
            right.transpose.map { |column| row.zip(column).sum { |a, b| a * b } }
          end
        end

        # @return [Array<Array<Rational>>] the inverse of a 3x3 matrix
        def invert(matrix)
          # The cofactor of (row, column), with the indices wrapping round so
          # that the sign comes out right by itself.
          cofactor = lambda do |row, column|
            r1, r2 = [row + 1, row + 2].map { |index| index % 3 }
            c1, c2 = [column + 1, column + 2].map { |index| index % 3 }
            (matrix[r1][c1] * matrix[r2][c2]) - (matrix[r1][c2] * matrix[r2][c1])
          end
          determinant = (0..2).sum { |column| matrix[0][column] * cofactor.call(0, column) }
          Array.new(3) { |row| Array.new(3) { |column| cofactor.call(column, row) / determinant } }
        end

        # @return [Array<Array<Rational>>] a diagonal matrix
        def diagonal(values)
          values.each_with_index.map { |value, i| Array.new(3) { |j| i == j ? value : 0r } }
        end

        # @return [Array<Array<Rational>>] from linear RGB to XYZ for the given
        #   primaries' chromaticities (x, y pairs) and white point
        def rgb_to_xyz(primaries, white_point)
          columns = primaries.each_slice(2).map { |x, y| white(x, y) }.transpose
          scale = multiply(invert(columns), white_point.map { |value| [value] }).flatten
          multiply(columns, diagonal(scale))
        end

        # @return [Array<Array<Rational>>] a decimal matrix as rationals
        def exact(rows)
          rows.map { |row| row.map { |value| Rational(value) } }
        end

        D65 = white('0.3127', '0.3290')
        D50 = white('0.3457', '0.3585')

        BRADFORD = exact([%w[0.8951 0.2664 -0.1614], %w[-0.7502 1.7135 0.0367], %w[0.0389 -0.0685 1.0296]])

        # @return [Array<Array<Rational>>] chromatic adaptation between two
        #   white points
        def adapt(from, to)
          source = multiply(BRADFORD, from.map { |value| [value] }).flatten
          target = multiply(BRADFORD, to.map { |value| [value] }).flatten
          multiply(invert(BRADFORD), multiply(diagonal(target.zip(source).map { |t, s| t / s }), BRADFORD))
        end

        D50_TO_D65 = adapt(D50, D65)

        # From XYZ (D65) to OKLab's LMS, as CSS Color 4 gives it.
        XYZ_TO_LMS = exact([%w[0.8190224379967030 0.3619062600528904 -0.1288737815209879],
                            %w[0.0329836539323885 0.9292868615863434 0.0361446663506424],
                            %w[0.0481771893596242 0.2642395317527308 0.6335478284694309]])

        # From the cube roots of LMS to OKLab, as CSS Color 4 gives it.
        LMS_TO_OKLAB_EXACT = exact([%w[0.2104542683093140 0.7936177747023054 -0.0040720430116193],
                                    %w[1.9779985324311684 -2.4285922420485799 0.4505937096174110],
                                    %w[0.0259040424655478 0.7827717124575296 -0.8086757549230774]])

        # Each hub's matrix to XYZ with a D65 white point.
        TO_XYZ_D65 = {
          srgb: rgb_to_xyz(%w[0.64 0.33 0.30 0.60 0.15 0.06], D65),
          p3: rgb_to_xyz(%w[0.680 0.320 0.265 0.690 0.150 0.060], D65),
          a98: rgb_to_xyz(%w[0.64 0.33 0.21 0.71 0.15 0.06], D65),
          prophoto: multiply(D50_TO_D65,
                             rgb_to_xyz(%w[0.734699 0.265301 0.159597 0.840403 0.036598 0.000105], D50)),
          rec2020: rgb_to_xyz(%w[0.708 0.292 0.170 0.797 0.131 0.046], D65),
          xyz65: diagonal([1r, 1r, 1r]),
          xyz50: D50_TO_D65,
          lms: invert(XYZ_TO_LMS)
        }.freeze

        # Each hub's matrix from XYZ with a D65 white point.
        FROM_XYZ_D65 = TO_XYZ_D65.transform_values { |matrix| invert(matrix) }.freeze

        # Float matrices (row-major, 9 elements) for every ordered pair of
        # distinct hubs.
        PAIRS = TO_XYZ_D65.keys.permutation(2).to_h do |from, to|
          [[from, to].freeze, multiply(FROM_XYZ_D65[to], TO_XYZ_D65[from]).flatten.map(&:to_f).freeze]
        end.freeze

        LMS_TO_OKLAB = LMS_TO_OKLAB_EXACT.flatten.map(&:to_f).freeze
        OKLAB_TO_LMS = invert(LMS_TO_OKLAB_EXACT).flatten.map(&:to_f).freeze

        # @param matrix [Array<Float>] row-major 3x3
        # @param vector [Array<Float>]
        # @return [Array<Float>]
        def apply(matrix, vector)
          x, y, z = vector
          Array.new(3) { |row| (matrix[row * 3] * x) + (matrix[(row * 3) + 1] * y) + (matrix[(row * 3) + 2] * z) }
        end

        # Converts a linear-light vector between two hubs.
        # @return [Array<Float>]
        def transform(from, to, vector)
          from == to ? vector : apply(PAIRS.fetch([from, to]), vector)
        end
      end

      private_constant :Matrices
    end
  end
end
