// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IERC20Minimal {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @title Pool
/// @notice A constant-product pool between two ERC-20s for the local
/// development chain's swap router. Uniswap-v2 pricing with a 30 bps fee on
/// the input; reserves are tracked internally, so tokens sent to the pool
/// without addLiquidity are not counted. There is no LP token: liquidity
/// added is never withdrawn.
contract Pool {
    address public immutable token0;
    address public immutable token1;

    uint256 private _reserve0;
    uint256 private _reserve1;

    event Swap(
        address indexed sender,
        address indexed tokenIn,
        address indexed tokenOut,
        uint256 amountIn,
        uint256 amountOut,
        address to
    );
    event LiquidityAdded(address indexed provider, uint256 amount0, uint256 amount1);

    constructor(address token0_, address token1_) {
        require(token0_ != address(0) && token1_ != address(0), "Pool: ZERO_ADDRESS");
        require(token0_ != token1_, "Pool: IDENTICAL_TOKENS");
        token0 = token0_;
        token1 = token1_;
    }

    function getReserves() external view returns (uint256 reserve0, uint256 reserve1) {
        return (_reserve0, _reserve1);
    }

    function getAmountOut(address tokenIn, uint256 amountIn) public view returns (uint256) {
        (uint256 reserveIn, uint256 reserveOut) = _reservesFor(tokenIn);
        return _amountOut(amountIn, reserveIn, reserveOut);
    }

    function addLiquidity(uint256 amount0, uint256 amount1) external {
        require(amount0 > 0 || amount1 > 0, "Pool: INSUFFICIENT_LIQUIDITY_ADDED");
        _reserve0 += amount0;
        _reserve1 += amount1;
        emit LiquidityAdded(msg.sender, amount0, amount1);
        _safeTransferFrom(token0, msg.sender, amount0);
        _safeTransferFrom(token1, msg.sender, amount1);
    }

    function swapExactIn(
        address tokenIn,
        uint256 amountIn,
        uint256 minAmountOut,
        address to,
        uint256 deadline
    ) external returns (uint256 amountOut) {
        require(block.timestamp <= deadline, "Pool: EXPIRED");
        (uint256 reserveIn, uint256 reserveOut) = _reservesFor(tokenIn);
        require(to != address(0), "Pool: INVALID_TO");
        amountOut = _amountOut(amountIn, reserveIn, reserveOut);
        require(amountOut > 0 && amountOut >= minAmountOut, "Pool: INSUFFICIENT_OUTPUT_AMOUNT");

        address tokenOut;
        if (tokenIn == token0) {
            tokenOut = token1;
            _reserve0 = reserveIn + amountIn;
            _reserve1 = reserveOut - amountOut;
        } else {
            tokenOut = token0;
            _reserve1 = reserveIn + amountIn;
            _reserve0 = reserveOut - amountOut;
        }
        emit Swap(msg.sender, tokenIn, tokenOut, amountIn, amountOut, to);

        _safeTransferFrom(tokenIn, msg.sender, amountIn);
        _safeTransfer(tokenOut, to, amountOut);
    }

    function _reservesFor(address tokenIn) private view returns (uint256 reserveIn, uint256 reserveOut) {
        if (tokenIn == token0) {
            return (_reserve0, _reserve1);
        }
        require(tokenIn == token1, "Pool: INVALID_TOKEN");
        return (_reserve1, _reserve0);
    }

    function _amountOut(uint256 amountIn, uint256 reserveIn, uint256 reserveOut) private pure returns (uint256) {
        require(amountIn > 0, "Pool: INSUFFICIENT_INPUT_AMOUNT");
        require(reserveIn > 0 && reserveOut > 0, "Pool: INSUFFICIENT_LIQUIDITY");
        uint256 amountInWithFee = amountIn * 9970;
        return (amountInWithFee * reserveOut) / (reserveIn * 10000 + amountInWithFee);
    }

    function _safeTransfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory data) = token.call(abi.encodeCall(IERC20Minimal.transfer, (to, amount)));
        _requireTransferred(ok, data);
    }

    function _safeTransferFrom(address token, address from, uint256 amount) private {
        if (amount == 0) {
            return;
        }
        (bool ok, bytes memory data) =
            token.call(abi.encodeCall(IERC20Minimal.transferFrom, (from, address(this), amount)));
        _requireTransferred(ok, data);
    }

    /// Bubbles the token's own revert reason up, so a caller without enough
    /// balance or allowance sees the ERC-20's message, not a generic one.
    function _requireTransferred(bool ok, bytes memory data) private pure {
        if (!ok) {
            if (data.length > 0) {
                assembly {
                    revert(add(data, 32), mload(data))
                }
            }
            revert("Pool: TRANSFER_FAILED");
        }
        require(data.length == 0 || abi.decode(data, (bool)), "Pool: TRANSFER_FAILED");
    }
}
